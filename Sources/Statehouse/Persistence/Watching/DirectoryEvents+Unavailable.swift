#if !canImport(Glibc) && !canImport(Darwin)
/// Where neither inotify nor kqueue is available: watching fails, and followers poll.
final class DirectoryEvents: Sendable {
    init(directory: String, onEvent: @escaping @Sendable (DirectoryEvent) -> Void) throws(FileWatchFailure) {
        throw FileWatchFailure(description: "watching files is not available on this platform")
    }

    func follow(names: Set<String>) {}

    func cancel() {}
}
#endif
