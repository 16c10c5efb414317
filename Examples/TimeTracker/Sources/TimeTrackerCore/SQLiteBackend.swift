import Foundation
import GRDB
import StatehouseSQLite

/// The tracker's tables in an SQLite file every process on this machine shares, through GRDB.
///
/// WAL mode, so that readers never wait for a writer; foreign keys, so that deleting a project deletes its activities;
/// the schema made by a migrator; the file readable by its owner only. A write is an *immediate* transaction, which
/// takes the write lock before its first read; one that finds the database locked by another process waits for it
/// until its deadline (``WriteDeadline``), then fails with ``TrackerError/databaseLocked(waited:)``. Changes by other
/// processes are seen by polling SQLite's `PRAGMA data_version` (`DatabaseChangeMonitor`).
final class SQLiteBackend: TrackerBackend {
    let path: String
    let pool: DatabasePool
    let writeDeadline: WriteDeadline
    private let safetyNet: Duration
    /// The file opened, and its write-ahead log and shared index (`-wal`, `-shm`, where SQLite keeps them: beside
    /// the file a symbolic link points to): writes stop once any of them is another file, or none.
    let identity: FileIdentity
    let journal: [(path: String, identity: FileIdentity)]

    var location: String { path }

    init(path: String, safetyNet: Duration, lockTimeout: Duration) throws(TrackerError) {
        self.path = path
        self.safetyNet = safetyNet
        writeDeadline = WriteDeadline(timeout: lockTimeout)
        var configuration = Configuration()
        configuration.busyMode = writeDeadline.busyMode
        try DatabaseLocation.checkBeforeOpening(path)
        try DatabaseLocation.checkOwner(path, busyMode: configuration.busyMode)
        do {
            pool = try SharedDatabase.openPool(at: path, configuration: configuration)
            try pool.writeWithoutTransaction(DatabaseLocation.claim)
            try Self.migrator.migrate(pool)
        } catch {
            throw DatabaseLocation.openingFailure(error, path: path)
        }
        guard let identity = FileIdentity(path: path) else { throw .databaseGone(path: path) }
        self.identity = identity
        // SQLite keeps both while any connection is open, and this pool keeps its own open: the same files until the
        // tracker closes. A removed log takes the commits it holds with it; a removed index lets two processes keep
        // two indexes of one log, and write over each other's commits.
        let realPath = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        journal = ["-wal", "-shm"].compactMap { suffix in
            FileIdentity(path: realPath + suffix).map { (realPath + suffix, $0) }
        }
    }

    /// What went wrong, in words, without the SQL that was running (a user cannot act on it, and it tells an
    /// attacker about the schema).
    static func reason(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return String(describing: error) }
        return error.message ?? "SQLite error \(error.resultCode.rawValue)"
    }

    /// Runs on GRDB's writer queue: the task that awaits it leaves its thread to others meanwhile, so a database
    /// locked by another program holds up the writes, never the requests that only read.
    func write<Result: Sendable>(
        until deadline: ContinuousClock.Instant, _ body: @escaping @Sendable (any SQLStatements) throws -> Result
    ) async throws -> Result {
        do {
            return try await pool.writeWithoutTransaction { db in try self.transaction(in: db, until: deadline, body) }
        } catch {
            throw writeFailure(error)
        }
    }

    /// ``write(until:_:)``, blocking the calling thread until it commits: for a caller off Swift's cooperative pool
    /// that must answer synchronously (the sync server's reducer).
    func writeBlocking<Result>(
        until deadline: ContinuousClock.Instant, _ body: (any SQLStatements) throws -> Result
    ) throws -> Result {
        do {
            return try pool.writeWithoutTransaction { db in try transaction(in: db, until: deadline, body) }
        } catch {
            throw writeFailure(error)
        }
    }

    private func transaction<Result>(
        in db: Database, until deadline: ContinuousClock.Instant, _ body: (any SQLStatements) throws -> Result
    ) throws -> Result {
        // The deadline bounds only the waits for another program's lock: a write that finds the database free
        // proceeds however long it waited in line, and a lock timeout of 0 means "never wait", not "never write".
        try writeDeadline.applying(deadline) {
            var result: Result?
            try db.inTransaction(.immediate) {
                result = try body(GRDBStatements(db: db))
                // Under the write lock, just before committing: a file removed or replaced meanwhile gets
                // nothing, so no write is confirmed into a file nobody will open again.
                guard isStillAtItsPath else { throw TrackerError.databaseGone(path: path) }
                return .commit
            }
            guard let result else { throw TrackerError.database("the transaction ended without a result") }
            return result
        }
    }

    private func writeFailure(_ error: any Error) -> any Error {
        switch error {
        case let error as TrackerError: error
        case let error as DatabaseError where error.resultCode == .SQLITE_BUSY: TrackerError.databaseLocked(waited: writeDeadline.timeout)
        case let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE: UniqueViolation(reason: Self.reason(error))
        default: TrackerError.database(Self.reason(error))
        }
    }

    func read<Result>(_ body: (any SQLStatements) throws -> Result) throws(TrackerError) -> Result {
        do {
            return try pool.read { db in try body(GRDBStatements(db: db)) }
        } catch let error as TrackerError {
            throw error
        } catch {
            throw .database("could not read \(path): \(Self.reason(error))")
        }
    }

    func watch(
        changed: @escaping @Sendable () -> Void, lost: @escaping @Sendable (TrackerError) -> Void
    ) throws(TrackerError) -> any Sendable {
        // The monitor also reports the file (or its -wal or -shm) removed or replaced: then no write goes there any
        // more (see `write`), and the views are told why.
        do {
            return try DatabaseChangeMonitor(path: path, safetyNet: safetyNet) { [self] in
                if isStillAtItsPath { changed() } else { lost(.databaseGone(path: path)) }
            }
        } catch {
            throw .database("could not watch \(path): \(Self.reason(error))")
        }
    }

    /// Whether `path` still names the file this database opened, and its log and index the ones it opened.
    var isStillAtItsPath: Bool {
        FileIdentity(path: path) == identity && journal.allSatisfy { FileIdentity(path: $0.path) == $0.identity }
    }
}

/// One GRDB connection's statements, in its transaction.
struct GRDBStatements: SQLStatements {
    let db: Database

    var binaryCollation: String { "" }

    /// `AUTOINCREMENT` keeps the last id in `sqlite_sequence`, one row per table (none before the first insert).
    func lastGeneratedID(in table: String) throws -> Int64 {
        try value("SELECT seq FROM sqlite_sequence WHERE name = ?", [.text(table)])?.integer ?? 0
    }

    /// Makes `table` give ids above `id` from now on.
    func setLastGeneratedID(_ id: Int64, in table: String) throws {
        try execute("DELETE FROM sqlite_sequence WHERE name = ?", [.text(table)])
        try execute("INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", [.text(table), .integer(id)])
    }

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [[SQLValue]] {
        let values: [(any DatabaseValueConvertible)?] = arguments.map { argument in
            switch argument {
            case .integer(let value): value
            case .real(let value): value
            case .text(let value): value
            case .null: nil
            }
        }
        return try Row.fetchAll(db, sql: sql, arguments: StatementArguments(values)).map { row in
            row.databaseValues.map { value in
                switch value.storage {
                case .int64(let number): .integer(number)
                case .double(let number): .real(number)
                case .string(let text): .text(text)
                case .blob, .null: .null
                }
            }
        }
    }
}
