import Foundation

/// Which file a path names: its device and inode. A file removed or replaced (by a restore, by `rm` and a new one)
/// keeps its path but not its identity, and SQLite goes on writing into the old file, which nobody will open again.
struct FileIdentity: Equatable, Sendable {
    let device: UInt64
    let inode: UInt64

    /// The identity of the file at `path` now; `nil` if there is none.
    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        device = UInt64(info.st_dev)
        inode = UInt64(info.st_ino)
    }
}

/// Asks `isIntact` every `interval`, and calls `onLoss` once it says no.
///
/// Polling, because the moment matters little: every write checks the same thing itself before it commits (see
/// `SQLiteBackend.write`), so no write is confirmed into a lost file; this only tells the views sooner.
final class FileIdentityWatch: Sendable {
    private let watching: Task<Void, Never>

    init(every interval: Duration, isIntact: @escaping @Sendable () -> Bool, onLoss: @escaping @Sendable () -> Void) {
        watching = Task.detached(priority: .utility) {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                if !Task.isCancelled, !isIntact() {
                    onLoss()
                    return
                }
            }
        }
    }

    deinit {
        watching.cancel()
    }
}
