import Foundation
import GRDB

/// Where a ``SyncServer`` keeps the authoritative copy of its stores and containers: each store's state and cursor,
/// every client's last handled sequence number, the actions it applied and those it refused; each container's value
/// and version.
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
                    token TEXT NOT NULL, PRIMARY KEY (store, client)
                );
                CREATE TABLE syncAction (
                    store TEXT NOT NULL, cursor INTEGER NOT NULL, client TEXT NOT NULL, seq INTEGER NOT NULL,
                    action BLOB NOT NULL, PRIMARY KEY (store, cursor)
                );
                CREATE INDEX syncActionOfClient ON syncAction (store, client, seq);
                CREATE TABLE syncRefusal (
                    store TEXT NOT NULL, client TEXT NOT NULL, seq INTEGER NOT NULL, reason TEXT NOT NULL,
                    action BLOB NOT NULL, PRIMARY KEY (store, client, seq)
                );
                """)
        }
        migrator.registerMigration("sync containers") { db in
            // A removal keeps the row, with no value and the next version: a version names one value for good, so
            // an `If-Match` of a value removed and stored again never matches the new one.
            try db.execute(sql: "CREATE TABLE syncContainer (key TEXT PRIMARY KEY, value BLOB, version INTEGER NOT NULL)")
        }
        try migrator.migrate(database)
    }

    /// A store as stored: `nil` before its first push.
    func load(store: String) throws -> StoredStore? {
        try database.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT state, cursor FROM syncStore WHERE name = ?", arguments: [store])
            else { return nil }
            var clients: [String: PushingClient] = [:]
            for client in try Row.fetchAll(
                db, sql: "SELECT client, handledThrough, token FROM syncClient WHERE store = ?", arguments: [store]
            ) {
                clients[client["client"]] = PushingClient(handledThrough: client["handledThrough"], token: client["token"])
            }
            return StoredStore(state: row["state"], cursor: row["cursor"], clients: clients)
        }
    }

    /// Commits what pushes did, in order, in one transaction.
    func commit(_ pushes: [CommittedPush], store: String) throws {
        try database.write { db in
            for push in pushes { try commit(push, store: store, in: db) }
        }
    }

    /// Commits a state the app changed by other means than pushes (a store hosted with `keptBy`).
    func commit(state: Data, cursor: Int64, store: String) throws {
        try database.write { db in try save(state: state, cursor: cursor, store: store, in: db) }
    }

    private func save(state: Data, cursor: Int64, store: String, in db: Database) throws {
        try db.execute(
            sql: """
                INSERT INTO syncStore (name, state, cursor) VALUES (?, ?, ?)
                ON CONFLICT (name) DO UPDATE SET state = excluded.state, cursor = excluded.cursor
                """,
            arguments: [store, state, cursor]
        )
    }

    /// The clients that pushed to `store`, the latest first.
    func clients(of store: String) throws -> [SyncClientSummary] {
        try database.read { db in
            try Row.fetchAll(
                db, sql: "SELECT client, handledThrough, lastSeen FROM syncClient WHERE store = ? ORDER BY lastSeen DESC",
                arguments: [store]
            ).map { row in
                SyncClientSummary(
                    name: row["client"], handledThrough: row["handledThrough"],
                    lastPush: Date(timeIntervalSince1970: row["lastSeen"])
                )
            }
        }
    }

    private func commit(_ push: CommittedPush, store: String, in db: Database) throws {
        try save(state: push.state, cursor: push.cursor, store: store, in: db)
        try db.execute(
            sql: """
                INSERT INTO syncClient (store, client, handledThrough, lastSeen, token) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT (store, client) DO UPDATE
                SET handledThrough = excluded.handledThrough, lastSeen = excluded.lastSeen
                """,
            arguments: [store, push.client, push.handledThrough, Date().timeIntervalSince1970, push.token]
        )
        for applied in push.applied {
            try db.execute(
                sql: "INSERT INTO syncAction (store, cursor, client, seq, action) VALUES (?, ?, ?, ?, ?)",
                arguments: [store, applied.cursor, push.client, applied.seq, applied.action]
            )
        }
        for refusal in push.refused {
            try db.execute(
                sql: "INSERT INTO syncRefusal (store, client, seq, reason, action) VALUES (?, ?, ?, ?, ?)",
                arguments: [store, push.client, refusal.seq, refusal.reason, refusal.action]
            )
        }
    }

    /// `client`'s actions `seqs` as the store handled them, for a batch pushed again: each one's bytes, and the
    /// reason it was refused, if it was.
    func handled(store: String, client: String, seqs: ClosedRange<Int64>) throws -> [Int64: HandledAction] {
        try database.read { db in
            let arguments: StatementArguments = [store, client, seqs.lowerBound, seqs.upperBound]
            var handled: [Int64: HandledAction] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT seq, action FROM syncAction WHERE store = ? AND client = ? AND seq BETWEEN ? AND ?",
                arguments: arguments
            ) {
                handled[row["seq"]] = HandledAction(action: row["action"], refusal: nil)
            }
            for row in try Row.fetchAll(
                db,
                sql: "SELECT seq, action, reason FROM syncRefusal WHERE store = ? AND client = ? AND seq BETWEEN ? AND ?",
                arguments: arguments
            ) {
                handled[row["seq"]] = HandledAction(action: row["action"], refusal: row["reason"])
            }
            return handled
        }
    }
}

/// A store's row and its clients' sequence numbers.
struct StoredStore {
    var state: Data
    var cursor: Int64
    var clients: [String: PushingClient]
}

/// An action a store handled: its bytes as the server encodes them, and why it was refused, if it was.
package struct HandledAction: Equatable, Codable, Sendable {
    package var action: Data
    package var refusal: String?

    package init(action: Data, refusal: String?) {
        self.action = action
        self.refusal = refusal
    }
}

/// What one push changed, to commit.
struct CommittedPush {
    struct Applied {
        var cursor: Int64
        var seq: Int64
        var action: Data
    }

    struct Refused {
        var seq: Int64
        var reason: String
        var action: Data
    }

    var client: String
    var token: String
    var state: Data
    var cursor: Int64
    var handledThrough: Int64
    var applied: [Applied]
    var refused: [Refused]
}
