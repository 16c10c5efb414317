import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's one watcher of files, shared by every storage, container, store and database monitor that follows
/// changes others make.
///
/// Each directory is watched once — by its device and inode, whatever path names it — however many keys and
/// followers watch entries in it; on Linux, one thread reads the events of every directory. Watching a directory
/// rather than a file sees what an atomic save does (a new file renamed over the old one) and a file deleted and
/// made again, which a watch on the file itself would lose with its inode. Each follower's watch is a
/// ``DirectoryFollower``, which watches the directory again when it is made again.
package final class FileWatcher: Sendable {
    /// The process's watcher.
    package static let shared = FileWatcher()

    /// A directory, by device and inode.
    private struct Directory: Hashable {
        let device: UInt64
        let inode: UInt64
    }

    private struct State {
        var registry = FileWatchRegistry<Directory>()
        var watched: [Directory: DirectoryEvents] = [:]
    }

    private let state = Locked(State())

    private init() {}

    /// Calls `onChange` whenever an entry of `directory` named in `names` is created, removed, renamed, written to,
    /// or closed after writing; also when the kernel lost events.
    ///
    /// The watch outlives the directory: removed or moved away and made again, it is watched again as soon as it is
    /// back (its parents are followed meanwhile), and `onChange` is called each time it goes and comes back. Only
    /// if it cannot be watched again (inotify's limits) does the reason go to ``StatehouseDiagnostics``: the
    /// followers' safety-net poll is then all there is.
    ///
    /// `onChange` runs on the watching thread: it must return quickly (queue the work elsewhere).
    ///
    /// - Returns: What stops the calls.
    /// - Throws: ``FileWatchFailure`` if `directory` cannot be watched: it does not exist, or the kernel refuses
    ///   (inotify's limits on Linux).
    package func watch(
        directory path: String,
        names: Set<String>,
        onChange: @escaping @Sendable () -> Void
    ) throws(FileWatchFailure) -> StorageWatch {
        let follower = DirectoryFollower(path: path, names: names, onChange: onChange)
        try follower.start()
        return StorageWatch { follower.stop() }
    }

    /// Calls `onChange` as ``watch(directory:names:onChange:)`` does, for as long as the directory now at `path`
    /// lasts: once it is removed or moved away, `onGone` is called instead, once, and the registration is over.
    ///
    /// - Returns: The registration's id, for ``unregister(_:)``.
    /// - Throws: ``FileWatchFailure`` if `directory` cannot be watched, as ``watch(directory:names:onChange:)``.
    func register(
        directory path: String,
        names: Set<String>,
        onChange: @escaping @Sendable () -> Void,
        onGone: @escaping @Sendable () -> Void
    ) throws(FileWatchFailure) -> UInt64 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw FileWatchFailure(description: "could not watch \(path) (\(String(cString: strerror(errno))))")
        }
        let directory = Directory(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        return try state.withLock { (state: inout State) throws(FileWatchFailure) -> UInt64 in
            let (id, isNew) = state.registry.add(directory, names: names, onChange: onChange, onGone: onGone)
            if isNew {
                do throws(FileWatchFailure) {
                    let events = try DirectoryEvents(directory: path) { event in
                        FileWatcher.shared.deliver(event, in: directory)
                    }
                    state.watched[directory] = events
                } catch {
                    _ = state.registry.remove(id)
                    throw error
                }
            }
            state.watched[directory]?.follow(names: state.registry.names(in: directory))
            return id
        }
    }

    /// How many directories are watched now.
    package var watchedDirectoryCount: Int {
        state.withLock { $0.watched.count }
    }

    /// Ends registration `id`; nothing if it is over already.
    func unregister(_ id: UInt64) {
        state.withLock { state in
            guard let (directory, wasLast) = state.registry.remove(id) else { return }
            if wasLast {
                state.watched.removeValue(forKey: directory)?.cancel()
            } else {
                state.watched[directory]?.follow(names: state.registry.names(in: directory))
            }
        }
    }

    private func deliver(_ event: DirectoryEvent, in directory: Directory) {
        let callbacks = state.withLock { state in
            switch event {
            case .changed(let names):
                return state.registry.callbacks(in: directory, named: names)
            case .unknown:
                return state.registry.callbacks(in: directory, named: nil)
            case .gone:
                state.watched.removeValue(forKey: directory)?.cancel()
                return state.registry.removeDirectory(directory)
            }
        }
        for callback in callbacks.values { callback() }
    }
}
