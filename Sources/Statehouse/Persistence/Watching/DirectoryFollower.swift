import Foundation

/// One follower's watch of a directory, which outlives the directory: removed or moved away, and made again, it is
/// watched again as soon as it is back.
///
/// While the directory is missing, its parent is followed for the directory's name — by a follower of its own, so
/// that a whole tree removed and made again (`mkdir -p`) is climbed back down level by level. Each time the
/// directory comes back, `onChange` is called once its new watch is in place: what it held may have changed, and a
/// change made before the watch began told nobody.
final class DirectoryFollower: Sendable {
    private enum State {
        /// Registered with the watcher under this id.
        case watching(UInt64)
        /// The directory is missing: its parent is followed for it.
        case awaiting(DirectoryFollower)
        /// Neither the directory nor any parent can be watched (reported): the followers' safety net is all there is.
        case unwatched
        case stopped
    }

    private let path: String
    private let names: Set<String>
    private let onChange: @Sendable () -> Void
    private let state = Locked(State.unwatched)

    init(path: String, names: Set<String>, onChange: @escaping @Sendable () -> Void) {
        self.path = path
        self.names = names
        self.onChange = onChange
    }

    /// Watches the directory, which must exist.
    func start() throws(FileWatchFailure) {
        try state.withLock { (state: inout State) throws(FileWatchFailure) in
            state = .watching(try register())
        }
    }

    /// Watches the directory if it exists, and otherwise follows its parent until it does.
    func startAwaiting() {
        state.withLock { $0 = follow() }
    }

    /// Ends every watch; nothing is called once it returns, except a call already on its way.
    func stop() {
        switch state.withLock({ state in defer { state = .stopped }; return state }) {
        case .watching(let id): FileWatcher.shared.unregister(id)
        case .awaiting(let parent): parent.stop()
        case .unwatched, .stopped: break
        }
    }

    private func register() throws(FileWatchFailure) -> UInt64 {
        try FileWatcher.shared.register(
            directory: path, names: names, onChange: onChange, onGone: { [weak self] in self?.directoryWentAway() }
        )
    }

    /// Called with the lock held: the state that follows the directory from now on.
    private func follow() -> State {
        let parentPath = (path as NSString).deletingLastPathComponent
        var failure: FileWatchFailure
        do {
            return .watching(try register())
        } catch {
            failure = error
        }
        // Only a missing directory (nothing there, or a file in its place) is awaited: one that is there but cannot
        // be watched (no inotify watches left) would be awaited forever. One that is there may also have been made
        // just after the try: try once more.
        if isDirectory(path) {
            do {
                return .watching(try register())
            } catch {
                failure = error
            }
        }
        guard !isDirectory(path), !parentPath.isEmpty, parentPath != path else {
            StatehouseDiagnostics.report(.watchingStopped(directory: path, reason: failure.description))
            return .unwatched
        }
        let parent = DirectoryFollower(path: parentPath, names: [(path as NSString).lastPathComponent]) {
            [weak self] in self?.parentChanged()
        }
        parent.startAwaiting()
        // The directory may have been made between the first try and the parent's watch, which then told nobody.
        guard let id = try? register() else { return .awaiting(parent) }
        parent.stop()
        return .watching(id)
    }

    /// The kernel stopped watching the directory (the watcher forgot the registration): follow it again.
    private func directoryWentAway() {
        let followed = state.withLock { state in
            guard case .watching = state else { return false }
            state = follow()
            return true
        }
        if followed { onChange() }
    }

    /// Something happened to the directory's name in its parent: watch it, if it is back.
    private func parentChanged() {
        let back = state.withLock { state in
            guard case .awaiting(let parent) = state, let id = try? register() else { return false }
            parent.stop()
            state = .watching(id)
            return true
        }
        if back { onChange() }
    }

    private func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }
}
