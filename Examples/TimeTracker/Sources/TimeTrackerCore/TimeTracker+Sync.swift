import Foundation
import Statehouse

/// What syncing needs of a tracker: on a server, its database as the authoritative copy apps follow; on a client
/// (`--remote`), its database as the copy of the server's that the commands read.
extension TimeTracker {
    /// The database's contents now, as a sync server sends them. Blocks: call it off Swift's cooperative pool.
    public func contents() throws(TrackerError) -> TrackerContents {
        try database.contents()
    }

    /// Applies an action an app pushed, once: one applied already (the server was stopped before it noted so, and
    /// the app pushed it again) is not applied again. Returns the contents after. Blocks: call it off Swift's
    /// cooperative pool, as a sync server's reducer runs.
    ///
    /// - Throws: The ``TrackerError`` the rules refuse the action with; nothing is written then.
    public func applySynced(_ synced: SyncedTrackerAction) throws -> TrackerContents {
        try database.applySynced(synced, until: .now + lockTimeout)
    }

    /// The place in the database's log of the newest action logged, or 0: a copy's next exchange hands over the
    /// actions after its cursor, which a database put in the copy's place would not have.
    public func newestLoggedActionID() throws(TrackerError) -> Int64 {
        try database.backend.read { sql in try TrackerDatabase.newestLoggedAction(in: sql) }
    }

    /// For a copy of another tracker (`timetrack --remote`): in one transaction that no other write runs beside,
    /// hands `send` the actions applied to this database since the logged action `cursor` (none for `nil`), and
    /// makes the database hold the contents `send` returns, logging no action. Returns once the store shows them.
    ///
    /// `send` forwards the actions to the synced store and returns its state: the server's contents with the
    /// actions it has not applied yet on top. An action applied here between two exchanges is thereby never lost.
    ///
    /// - Returns: The cursor of the next exchange.
    public func exchange(
        after cursor: Int64?, sending send: @escaping @Sendable ([LoggedEntry]) -> TrackerContents
    ) async throws -> Int64 {
        let next = try await database.exchange(after: cursor, until: .now + lockTimeout, send)
        let loaded = try await Task.detached { [database] in try database.snapshot() }.value
        store.dispatch(.loaded(loaded))
        return next
    }
}

/// An action as this database's log holds it: its place in the log, which no other action of this database has, and
/// the action.
public struct LoggedEntry: Sendable, Equatable {
    public let id: Int64
    public let action: LoggedAction
}
