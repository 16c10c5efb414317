import Foundation
import GRDB
import Statehouse

/// The commits to one database, as this process's followers learn of them: one per database file, shared by every
/// ``SQLiteStorage`` key and every ``DatabaseChangeMonitor`` that watches it.
///
/// It watches what a commit touches — the `-wal` file in WAL mode, the database file itself for checkpoints and
/// rollback-journal databases, and their names in the directory (a file removed or replaced) — through the process's
/// one file watcher. The kernel reports a write as it happens, before the commit is visible: so each burst of events
/// is confirmed on a connection of its own, which first waits for the writer to finish (it takes the write lock and
/// releases it at once, writing nothing), then reads `PRAGMA data_version`. Only a change is passed on.
final class DatabaseWatch: Sendable {
    private let path: String
    private let configuration: Configuration
    /// The watch's connection, and the file it opened. Replaced, on `queue`, when the path names another file (the
    /// database replaced): the old file's version says nothing of the new one's commits.
    private let connection: Locked<(database: DatabaseQueue, file: DatabaseMark.FileIdentity?)>
    private let decisions: Locked<DatabaseChangeCheck>
    private let subscribers: Subscribers
    /// The watch of the database's files, or why there is none.
    private let files = Locked<Result<StorageWatch, FileWatchFailure>>(
        .failure(FileWatchFailure(description: "watching was not asked for"))
    )
    /// Checks run here, one at a time.
    private let queue = DispatchQueue(label: "Statehouse.databaseWatch")

    /// Who to tell; an object of its own, so that a check waiting for the writer can give up once nobody follows.
    private final class Subscribers: Sendable {
        let callbacks = Locked<(last: UInt64, byID: [UInt64: GuardedCallback])>((0, [:]))

        /// Whether to go on waiting for the writer, after `tries` waits: as long as someone follows; before anyone
        /// does (the baseline), for about 10 seconds, as the storage's own connections do.
        func keepWaiting(after tries: Int) -> Bool {
            let (following, everFollowed) = callbacks.withLock { (!$0.byID.isEmpty, $0.last > 0) }
            return following || (!everFollowed && tries < 5_000)
        }
    }

    /// The watch of the database at `path` that the process shares, made if needed.
    ///
    /// Shared by path, as a watch follows its path (a database replaced there is followed on). Not by the file's
    /// number (inode): a deleted database still watched keeps its watch, and ext4 gives that number to the next new
    /// file at once, wherever it is; that database would get a watch of the deleted one's path.
    ///
    /// - Throws: ``StorageError`` (operation `.open`) if the database does not exist or cannot be opened.
    static func shared(path: String) throws(StorageError) -> DatabaseWatch {
        guard DatabaseMark.identity(of: path) != nil else { throw missing(path) }
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.path
        return try registry.withLock { (watches: inout [String: WeakWatch]) throws(StorageError) in
            if let watch = watches[absolute]?.watch { return watch }
            let watch = try DatabaseWatch(path: path, pushing: true)
            watches = watches.filter { $0.value.watch != nil }
            watches[absolute] = WeakWatch(watch: watch)
            return watch
        }
    }

    private struct WeakWatch {
        weak var watch: DatabaseWatch?
    }

    private static let registry = Locked<[String: WeakWatch]>([:])

    /// Opens the watch's connection and reads the baseline: every change committed from now on is reported.
    ///
    /// - Parameter pushing: Whether to watch the database's files; without it, only ``check(waitingForWriter:)``
    ///   looks (a poll).
    init(path: String, pushing: Bool) throws(StorageError) {
        guard DatabaseMark.identity(of: path) != nil else { throw Self.missing(path) }
        self.path = path
        let subscribers = Subscribers()
        self.subscribers = subscribers
        // Waiting for the writer takes the write lock, which needs a writable database.
        let writable = access(path, W_OK) == 0
        var configuration = Configuration()
        configuration.readonly = !(pushing && writable)
        configuration.label = "Statehouse.databaseWatch"
        // A writer holds its lock for a commit's few milliseconds: look often, so that confirming adds little. A
        // writer that holds it for long (an open transaction in an sqlite3 shell) is waited for as long as someone
        // follows: nothing can be confirmed before it commits anyway.
        configuration.busyMode = .callback { tries in
            guard subscribers.keepWaiting(after: tries) else { return false }
            usleep(tries < 50 ? 200 : 2_000)
            return true
        }
        self.configuration = configuration
        do {
            let file = DatabaseMark.identity(of: path)
            let database = try DatabaseQueue(path: path, configuration: configuration)
            connection = Locked((database, file))
            decisions = Locked(DatabaseChangeCheck(baseline: try Self.mark(of: path, in: database, waitingForWriter: false)))
        } catch {
            throw StorageError(
                .invalidConfiguration, key: nil, operation: .open,
                message: "Could not open the SQLite database at \(path) to watch it: \(error). Check the path and its permissions.",
                cause: error
            )
        }
        guard pushing else { return }
        guard writable else {
            files.withLock { $0 = .failure(FileWatchFailure(description: """
                \(path) is read-only to this process, so a commit cannot be confirmed as it happens; make it \
                writable to be told of changes at once
                """)) }
            return
        }
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let watched = Result { () throws(FileWatchFailure) in
            try FileWatcher.shared.watch(
                directory: directory.isEmpty ? "." : directory,
                names: [name, name + "-wal", name + "-shm", name + "-journal"]
            ) { [weak self] in self?.check(waitingForWriter: true) }
        }
        files.withLock { $0 = watched }
    }

    /// Why the database's files are not watched (its followers must poll); `nil` when they are.
    var pushUnavailable: String? {
        files.withLock { files in
            guard case .failure(let failure) = files else { return nil }
            return failure.description
        }
    }

    deinit {
        if case .success(let watch) = files.withLock({ $0 }) { watch.cancel() }
    }

    /// Calls `onChange` (on the watch's queue) after each change confirmed from now on.
    ///
    /// - Returns: What stops the calls: once its `cancel()` returns, no call starts, and none is still running on
    ///   another thread (a monitor released while the queue calls the monitors before it is never called).
    func subscribe(_ onChange: @escaping @Sendable () -> Void) -> StorageWatch {
        let callback = GuardedCallback(onChange)
        let id = subscribers.callbacks.withLock { subscribers in
            subscribers.last += 1
            subscribers.byID[subscribers.last] = callback
            return subscribers.last
        }
        // The subscription holds the watch: it lasts as long as someone follows the database.
        return StorageWatch { [self] in
            _ = subscribers.callbacks.withLock { $0.byID.removeValue(forKey: id) }
            callback.cancel()
        }
    }

    /// Looks for a change now, or after the check already queued. `waitingForWriter`: first wait for a commit in
    /// progress to end (after a file event).
    func check(waitingForWriter: Bool) {
        guard decisions.withLock({ $0.requested(waitingForWriter: waitingForWriter) }) else { return }
        queue.async { self.runCheck() }
    }

    private func runCheck() {
        let waits = decisions.withLock { $0.starts() }
        // A failed read (the database closed or unreadable for a moment) is left to the next event or poll.
        guard let mark = try? Self.mark(of: path, in: currentConnection(), waitingForWriter: waits),
            decisions.withLock({ $0.read(mark) })
        else { return }
        for callback in subscribers.callbacks.withLock({ Array($0.byID.values) }) { callback() }
    }

    /// Runs on `queue`: the connection, first opened again if the path names another file than the one it opened.
    /// The new file's mark differs from the old one's (its identity, at least): the replacement is reported once,
    /// and its commits from then on.
    private func currentConnection() -> DatabaseQueue {
        let (database, file) = connection.withLock { $0 }
        guard let current = DatabaseMark.identity(of: path), current != file,
            let reopened = try? DatabaseQueue(path: path, configuration: configuration)
        else { return database }
        connection.withLock { $0 = (reopened, current) }
        return reopened
    }

    private static func mark(of path: String, in connection: DatabaseQueue, waitingForWriter: Bool) throws -> DatabaseMark {
        try connection.inDatabase { db in
            if waitingForWriter { try db.inTransaction(.immediate) { .rollback } }
            let version = try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
            return DatabaseMark(
                dataVersion: version,
                files: [path, path + "-wal", path + "-shm"].map(DatabaseMark.identity(of:))
            )
        }
    }

    private static func missing(_ path: String) -> StorageError {
        StorageError(
            .invalidConfiguration, key: nil, operation: .open,
            message: "There is no SQLite database at \(path) to watch: open it (which creates it) first."
        )
    }
}
