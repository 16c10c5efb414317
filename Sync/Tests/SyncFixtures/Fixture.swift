import Foundation
import PostgresNIO
import Statehouse
import StatehouseServer
import StatehouseServerPostgres

/// Tokens and servers the tests and their helper processes share.
public enum Fixture {
    public static let writer = "writer-token-0123456789abcdef"
    /// Another app's token that may push to `tracker` too.
    public static let secondWriter = "second-writer-token-0123456789"
    public static let reader = "reader-token-0123456789abcdef"
    public static let other = "other-store-token-0123456789ab"
    public static let unknown = "unknown-token-0123456789abcdef"

    public static func tokens() throws -> SyncTokens {
        try SyncTokens([
            SyncGrant(
                name: "writer", token: writer, stores: ["tracker": .readWrite, "notes": .readWrite],
                containers: ["settings": .readWrite]
            ),
            SyncGrant(
                name: "second writer", token: secondWriter, stores: ["tracker": .readWrite], containers: ["settings": .readWrite]
            ),
            SyncGrant(name: "reader", token: reader, stores: ["tracker": .read], containers: ["settings": .read]),
            SyncGrant(name: "other", token: other, stores: ["other": .readWrite]),
        ])
    }

    /// A server hosting `tracker`, whose `authorize` refuses ``TrackerAction/forbidden`` and whose reducer throws on
    /// ``TrackerAction/impossible``; `notes`, a tracker with its undo history (``notesReducer``); and the container
    /// `settings` (``Settings``).
    public static func server(storage: SyncServerStorage? = nil, limits: SyncLimits = SyncLimits()) throws -> SyncServer {
        let server = SyncServer(storage: try storage ?? .inMemory(), tokens: try tokens(), limits: limits)
        server.host(store: "tracker", initialState: Tracker(), reducer: serverReducer, authorize: authorizeTracker)
        server.host(store: "notes", initialState: Undoable(Tracker()), reducer: notesReducer.reduce)
        server.host(container: "settings", of: Settings.self)
        return server
    }

    /// A server instance hosting `tracker` on the PostgreSQL action log `log` and `settings` on `log_settings`,
    /// which other instances share (see ``hostReplicated(on:client:log:)``). Run the replications it returns.
    public static func replicatedServer(client: PostgresClient, log: String) throws -> (SyncServer, [SyncReplication]) {
        let server = SyncServer(storage: try .inMemory(), tokens: try tokens())
        return (server, try hostReplicated(on: server, client: client, log: log))
    }

    /// Hosts `tracker` on the PostgreSQL action log `log` and `settings` on `log_settings`, as
    /// ``server(storage:limits:)`` hosts them on SQLite (without `notes`).
    public static func hostReplicated(on server: SyncServer, client: PostgresClient, log: String) throws -> [SyncReplication] {
        [
            try server.host(
                store: "tracker", replicatedOn: client, log: log, initialState: Tracker(), reducer: serverReducer,
                authorize: authorizeTracker
            ),
            try server.host(container: "settings", of: Settings.self, replicatedOn: client, log: "\(log)_settings"),
        ]
    }

    /// Refuses ``TrackerAction/forbidden``.
    private static let authorizeTracker: @Sendable (SyncCaller, TrackerAction) -> SyncVerdict = { _, action in
        action == .forbidden ? .refuse("forbidden here") : .allow
    }

    public static func temporaryFolder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-sync-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
