import Foundation
import GRDB
import Statehouse

/// Keeps state in a SQLite database, one row per key, through GRDB.
///
/// ```swift
/// let settings = StateContainer(Settings(), key: "settings", storage: .sqlite(path: databasePath))
/// ```
///
/// The database is opened in WAL mode (readers never wait for the writer, and a committed write survives a crash of
/// the process), its schema is made by a `DatabaseMigrator`, and the database file is created readable by its owner
/// only (SQLite gives its `-wal` and `-shm` files the same permissions). Several processes may use one database:
/// a connection that finds it locked waits up to 10 seconds.
///
/// Keys are compared as Swift compares strings, as in the other storages: a key is kept in Unicode canonical
/// composition (NFC), so `"café"` typed precomposed or decomposed is one row, and every byte of it counts, so
/// `"a"` and `"a\0b"` are two. (A key with a NUL is stored whole, though the `sqlite3` shell shows it cut at the NUL;
/// `SELECT CAST(key AS BLOB)` shows all of it.)
public final class SQLiteStorage: StateStorage {
    /// The database file.
    public let path: String
    /// The open database, or why it could not be opened: every operation then throws that.
    private let database: Result<DatabasePool, StorageError>

    /// Opens (or creates) the database at `path`.
    ///
    /// - Throws: `StorageError` (kind `.invalidConfiguration`, operation `.open`) if the file cannot be
    ///   created or opened, or is not a database.
    public convenience init(path: String) throws(StorageError) {
        self.init(opening: path)
        _ = try database.get()
    }

    /// Opens the database at `path`, keeping the failure for every operation to throw.
    init(opening path: String) {
        self.path = path
        do {
            let pool = try SharedDatabase.openPool(at: path)
            try Self.migrator.migrate(pool)
            database = .success(pool)
        } catch {
            database = .failure(StorageError(
                .invalidConfiguration, key: nil, operation: .open,
                message: "Could not open the SQLite database at \(path): \(error). Check the path and its permissions.",
                cause: error
            ))
        }
    }

    public func load(key: String) throws -> Data? {
        let row = Row(key)
        return try perform(.load, key: key) { try $0.read { db in try row.value(in: db) } }
    }

    public func save(_ data: Data, key: String) throws {
        _ = try saveReturningFingerprint(data, key: key)
    }

    public func remove(key: String) throws {
        let row = Row(key)
        try perform(.remove, key: key) { try $0.write { db in try row.remove(in: db) } }
    }

    /// Every key with stored data.
    public func keys() throws -> [String] {
        try perform(.load, key: nil) { database in
            try database.read { db in
                // As bytes: GRDB reads a text column as a C string, which would end a key at its first NUL.
                try Data.fetchAll(db, sql: "SELECT CAST(key AS BLOB) FROM statehouse_state ORDER BY key")
                    .map { String(decoding: $0, as: UTF8.self) }
            }
        }
    }

    /// The open database, or why it could not be opened.
    func openDatabase() throws(StorageError) -> DatabasePool {
        try database.get()
    }

    /// Runs `body` on the open database, throwing only `StorageError`s.
    private func perform<Result>(
        _ operation: StorageError.Operation,
        key: String?,
        _ body: (DatabasePool) throws -> Result
    ) throws(StorageError) -> Result {
        let pool = try openDatabase()
        return try StorageError.catching(key: key, operation: operation, in: path) { try body(pool) }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("statehouse_state") { db in
            try db.create(table: "statehouse_state") { table in
                table.primaryKey("key", .text)
                table.column("value", .blob).notNull()
            }
        }
        // Each save gives its row a new random 64-bit revision: the fingerprint that tells other processes it changed
        // (random rather than counted, so that a key removed and saved again never repeats an earlier revision).
        migrator.registerMigration("statehouse_state.revision") { db in
            try db.alter(table: "statehouse_state") { table in
                table.add(column: "revision", .integer).notNull().defaults(to: 0)
            }
        }
        return migrator
    }
}

extension SQLiteStorage: TransactionalStorage {
    /// The key's revision, new at every save (absent once the key is removed).
    public func fingerprint(key: String) throws -> StorageFingerprint {
        let normalized = Row(key).key
        return try perform(.fingerprint, key: key) { try $0.read { db in try Self.fingerprint(of: normalized, in: db) } }
    }

    /// Exact: the row and its revision are read in one transaction.
    public func loadWithFingerprint(key: String) throws -> (data: Data?, fingerprint: StorageFingerprint) {
        let row = Row(key)
        return try perform(.load, key: key) { database in
            try database.read { db in (try row.value(in: db), try Self.fingerprint(of: row.key, in: db)) }
        }
    }

    /// Exact: the revision is read in the transaction that saves.
    public func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        let row = Row(key)
        return try perform(.save, key: key) { database in
            try database.write { db in
                try row.store(data, in: db)
                return try Self.fingerprint(of: row.key, in: db)
            }
        }
    }

    /// An immediate transaction: it takes the database's write lock before reading, so no other connection, in this
    /// process or another, writes between the read and the write. (A deferred one would read first and could then
    /// fail to upgrade when another process wrote meanwhile.)
    public func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        let row = Row(key)
        return try perform(.transact, key: key) { database in
            try database.writeWithoutTransaction { db in
                var fingerprint = StorageFingerprint.absent
                try db.inTransaction(.immediate) {
                    if let data = try transform(try row.value(in: db)) {
                        try row.store(data, in: db)
                    } else {
                        try row.remove(in: db)
                    }
                    fingerprint = try Self.fingerprint(of: row.key, in: db)
                    return .commit
                }
                return fingerprint
            }
        }
    }

    private static func fingerprint(of key: String, in db: Database) throws -> StorageFingerprint {
        let revision = try Int64.fetchOne(
            db, sql: "SELECT revision FROM statehouse_state WHERE key = \(Row.keyParameter)", arguments: Row.arguments(key)
        )
        return revision.map { StorageFingerprint([$0]) } ?? .absent
    }
}

extension StateStorage where Self == SQLiteStorage {
    /// A storage in the SQLite database at `path`, created if needed.
    ///
    /// A database that cannot be opened does not stop the program: every operation of the storage throws the
    /// reason, so a container on it starts from its default, writes nothing, and says why in its `storageError`.
    /// Use `try SQLiteStorage(path:)` to handle the error where the storage is made.
    public static func sqlite(path: String) -> SQLiteStorage {
        SQLiteStorage(opening: path)
    }
}

/// Where a key's data lives: the row of its canonical composition (NFC), so that keys Swift calls equal (`"café"`
/// precomposed or decomposed) share a row, since SQLite compares text byte by byte. Rows written before keys were
/// normalized are still read, and are replaced by the normalized row at the next write.
///
/// Every byte of the key counts, NUL included (`"a"` and `"a\0b"` are two rows), as in the other storages.
private struct Row {
    /// The SQL that stands for a key bound with ``arguments(_:)``.
    ///
    /// GRDB binds a `String` as a C string (`sqlite3_bind_text` with length -1), which SQLite ends at the first NUL,
    /// so that every key with a NUL would share the row of its first part. Its UTF-8 bytes bound as a blob and cast
    /// to text keep their length, and give the very TEXT value a `String` gives for every key without a NUL: rows
    /// written before stay where they are.
    static let keyParameter = "CAST(? AS TEXT)"

    /// The arguments that bind `key` to ``keyParameter``.
    static func arguments(_ key: String, _ more: any DatabaseValueConvertible...) -> StatementArguments {
        StatementArguments([Data(key.utf8)] + more)
    }

    let key: String
    /// The row the key had before normalization, if that differs.
    let legacyKey: String?

    init(_ key: String) {
        self.key = StorageKey.canonical(key)
        self.legacyKey = StorageKey.legacy(key)
    }

    func value(in db: Database) throws -> Data? {
        for candidate in [key, legacyKey].compactMap(\.self) {
            let data = try Data.fetchOne(
                db, sql: "SELECT value FROM statehouse_state WHERE key = \(Self.keyParameter)",
                arguments: Self.arguments(candidate)
            )
            if let data { return data }
        }
        return nil
    }

    func store(_ data: Data, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO statehouse_state (key, value, revision) VALUES (\(Self.keyParameter), ?, random())
                ON CONFLICT(key) DO UPDATE SET value = excluded.value, revision = excluded.revision
                """,
            arguments: Self.arguments(key, data)
        )
        if let legacyKey {
            try Self.delete(legacyKey, in: db)
        }
    }

    func remove(in db: Database) throws {
        for candidate in [key, legacyKey].compactMap(\.self) {
            try Self.delete(candidate, in: db)
        }
    }

    private static func delete(_ key: String, in db: Database) throws {
        try db.execute(sql: "DELETE FROM statehouse_state WHERE key = \(keyParameter)", arguments: arguments(key))
    }
}
