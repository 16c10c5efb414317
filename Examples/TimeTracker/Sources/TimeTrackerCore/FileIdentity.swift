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
