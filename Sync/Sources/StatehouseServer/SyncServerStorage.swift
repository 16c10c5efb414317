import Foundation
import GRDB

/// Where a ``SyncServer`` keeps the authoritative copy of its stores: each store's state and cursor, every client's
/// last handled sequence number, the actions it applied and those it refused.
///
/// Each push is one transaction: the new state, the client's sequence number and the log entries commit together
/// or not at all, so an action is applied once even when the server is killed mid-push and the client pushes again.
public struct SyncServerStorage: Sendable {
    let database: any DatabaseWriter

    /// A SQLite database at `path` (created if missing), in WAL mode; one server process at a time.
    public static func sqlite(path: String) throws -> SyncServerStorage {
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let storage = SyncServerStorage(database: try DatabasePool(path: path, configuration: configuration))
        try storage.migrate()
        return storage
    }

    /// A database in memory, gone with the server: for tests and previews.
    public static func inMemory() throws -> SyncServerStorage {
        let storage = SyncServerStorage(database: try DatabaseQueue())
        try storage.migrate()
        return storage
    }

    private func migrate() throws {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("sync stores") { db in
            try db.execute(sql: """
                CREATE TABLE syncStore (name TEXT PRIMARY KEY, state BLOB NOT NULL, cursor INTEGER NOT NULL);
                CREATE TABLE syncClient (
                    store TEXT NOT NULL, client TEXT NOT NULL, handledThrough INTEGER NOT NULL, lastSeen DOUBLE NOT NULL,
                    PRIMARY KEY (store, client)
                );
                CREATE TABLE syncAction (
                    store TEXT NOT NULL, cursor INTEGER NOT NULL, client TEXT NOT NULL, seq INTEGER NOT NULL,
                    action BLOB NOT NULL, PRIMARY KEY (store, cursor)
                );
                CREATE TABLE syncRefusal (
                    store TEXT NOT NULL, client TEXT NOT NULL, seq INTEGER NOT NULL, reason TEXT NOT NULL,
                    PRIMARY KEY (store, client, seq)
                );
                """)
        }
        try migrator.migrate(database)
    }

    /// A store as stored: `nil` before its first push.
    func load(store: String) throws -> StoredStore? {
        try database.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT state, cursor FROM syncStore WHERE name = ?", arguments: [store])
            else { return nil }
            var clients: [String: Int64] = [:]
            for client in try Row.fetchAll(
                db, sql: "SELECT client, handledThrough FROM syncClient WHERE store = ?", arguments: [store]
            ) {
                clients[client["client"]] = client["handledThrough"]
            }
            return StoredStore(state: row["state"], cursor: row["cursor"], clients: clients)
        }
    }

    /// Commits what one push did, in one transaction.
    func commit(_ push: CommittedPush, store: String) throws {
        try database.write { db in
            try db.execute(
                sql: """
                    INSERT INTO syncStore (name, state, cursor) VALUES (?, ?, ?)
                    ON CONFLICT (name) DO UPDATE SET state = excluded.state, cursor = excluded.cursor
                    """,
                arguments: [store, push.state, push.cursor]
            )
            try db.execute(
                sql: """
                    INSERT INTO syncClient (store, client, handledThrough, lastSeen) VALUES (?, ?, ?, ?)
                    ON CONFLICT (store, client) DO UPDATE
                    SET handledThrough = excluded.handledThrough, lastSeen = excluded.lastSeen
                    """,
                arguments: [store, push.client, push.handledThrough, Date().timeIntervalSince1970]
            )
            for applied in push.applied {
                try db.execute(
                    sql: "INSERT INTO syncAction (store, cursor, client, seq, action) VALUES (?, ?, ?, ?, ?)",
                    arguments: [store, applied.cursor, push.client, applied.seq, applied.action]
                )
            }
            for refusal in push.refused {
                try db.execute(
                    sql: "INSERT INTO syncRefusal (store, client, seq, reason) VALUES (?, ?, ?, ?)",
                    arguments: [store, push.client, refusal.seq, refusal.reason]
                )
            }
        }
    }

    /// The refusals of `client`'s actions `seqs`, for the answer to a batch pushed again.
    func refusals(store: String, client: String, seqs: ClosedRange<Int64>) throws -> [(seq: Int64, reason: String)] {
        try database.read { db in
            try Row.fetchAll(
                db,
                sql: "SELECT seq, reason FROM syncRefusal WHERE store = ? AND client = ? AND seq BETWEEN ? AND ? ORDER BY seq",
                arguments: [store, client, seqs.lowerBound, seqs.upperBound]
            ).map { ($0["seq"], $0["reason"]) }
        }
    }
}

/// A store's row and its clients' sequence numbers.
struct StoredStore {
    var state: Data
    var cursor: Int64
    var clients: [String: Int64]
}

/// What one push changed, to commit.
struct CommittedPush {
    struct Applied {
        var cursor: Int64
        var seq: Int64
        var action: Data
    }

    var client: String
    var state: Data
    var cursor: Int64
    var handledThrough: Int64
    var applied: [Applied]
    var refused: [(seq: Int64, reason: String)]
}
