import Foundation

/// What a database looks like to one connection: its `PRAGMA data_version` (which changes when any other connection
/// commits) and which files its path, log and index name (which changes when one is removed or replaced).
struct DatabaseMark: Equatable, Sendable {
    struct FileIdentity: Hashable, Sendable {
        let device: UInt64
        let inode: UInt64
    }

    let dataVersion: Int
    let files: [FileIdentity?]

    /// The device and inode of the file at `path`; `nil` if there is none.
    static func identity(of path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }
}

/// The decisions of a ``DatabaseWatch``, apart from its connection, queue and lock: when to check, whether a
/// check must first wait for the writer, and whether what it read is a change.
struct DatabaseChangeCheck {
    private var known: DatabaseMark
    private var queued = false
    private var waitForWriter = false

    init(baseline: DatabaseMark) {
        known = baseline
    }

    /// A check is asked for: whether to queue one (`false` while one is queued and has not started: it will see
    /// this change too). `waitingForWriter`: the request comes from a file event, which the kernel sends as the
    /// writer writes, before its commit is visible.
    mutating func requested(waitingForWriter: Bool) -> Bool {
        self.waitForWriter = self.waitForWriter || waitingForWriter
        guard !queued else { return false }
        queued = true
        return true
    }

    /// The queued check starts; returns whether it waits for the writer first. A request from now on queues
    /// another check.
    mutating func starts() -> Bool {
        queued = false
        defer { waitForWriter = false }
        return waitForWriter
    }

    /// The check read `mark`: whether the database changed since the last one.
    mutating func read(_ mark: DatabaseMark) -> Bool {
        guard mark != known else { return false }
        known = mark
        return true
    }
}
