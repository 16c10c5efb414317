import Foundation
import PostgresNIO
import Statehouse
import StatehousePostgres
import StatehouseServer

extension SyncServer {
    /// Hosts the store `name` on an action log in PostgreSQL, which every server instance that hosts it on the same
    /// log shares: several instances behind a load balancer serve one store, and a push to any of them reaches the
    /// clients following every other.
    ///
    /// ```swift
    /// let replication = try server.host(
    ///     store: "tracker", replicatedOn: client, log: "tracker_pushes", initialState: Tracker(), reducer: trackerReducer
    /// )
    /// try await withThrowingDiscardingTaskGroup { group in
    ///     group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
    ///     group.addTask { try await replication.run() }
    ///     group.addTask { try await server.application(port: 8090).runService() }
    /// }
    /// ```
    ///
    /// Each push is appended to the log as one entry (its batch, its client's name, its token, and the verdicts of
    /// `authorize` here), in one transaction that gives it the log's next number. Every instance applies the log's
    /// entries in that order as one server applies pushes: each action once, in its client's order, with the
    /// client's sequence number, and the same refusals; so a batch pushed again, to this instance or another, applies
    /// once. The instance that took a push answers it once it applied its entry. The state, the clients' sequence
    /// numbers and each client's latest actions (to check a batch pushed again) are the replicated store's state, and
    /// stored in its snapshots; the server's `storage` holds none of them.
    ///
    /// The store answers 503 until ``SyncReplication/run()`` runs and has caught up with the log: an instance
    /// that just started would otherwise show clients an older state than they saw.
    ///
    /// - Parameters:
    ///   - name: The store's name in the routes (`/stores/{name}`).
    ///   - client: A client whose `run()` runs while the store is hosted.
    ///   - log: The log's table (see `ReplicatedStore`); one per hosted store, the same on every instance.
    ///   - initialState: The state before the log's first push; the same on every instance.
    ///   - reducer: The app's reducer. Every instance runs it on every action, so it must be deterministic (see
    ///     `ReplicatedStore`), and every instance must be given the same `SyncLimits`, so that all reach the same state.
    ///   - authorize: Asked on the instance a push came to, before it is appended.
    ///   - onIssue: Where the log's issues go; standard error by default.
    /// - Returns: The replication to run.
    /// - Throws: `StorageError.Kind.invalidConfiguration` for an invalid `log` name.
    public func host<State: Codable & Sendable, Action: Codable & Sendable>(
        store name: String,
        replicatedOn client: PostgresClient,
        log: String,
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) throws -> Void,
        authorize: @escaping @Sendable (SyncCaller, Action) -> SyncVerdict = { _, _ in .allow },
        onIssue: @escaping @Sendable (ReplicationIssue) -> Void = ReplicationIssue.standardError
    ) throws(StorageError) -> SyncReplication {
        let hosted = try ReplicatedHostedStore(
            client: client, log: log, initialState: initialState, limits: limits, reducer: reducer,
            authorize: authorize, onIssue: onIssue
        )
        host(store: name) { hosted }
        return SyncReplication(hosted.replica, following: hosted.following)
    }

    /// Hosts the container `key` on an action log in PostgreSQL, which every server instance that hosts it on the
    /// same log shares: a write to any instance is checked against the version every other instance saw last, and
    /// reaches the clients following each of them.
    ///
    /// Each write is appended to the log with the version it replaces; every instance applies the log's writes in
    /// order, so a write naming a version another instance replaced first meets 412 wherever it comes. A container's
    /// versions on its log start at 1, whatever the server's storage held.
    ///
    /// - Parameters:
    ///   - key: The container's key in the routes (`/containers/{key}`): 1 to 64 characters of `A-Z a-z 0-9 . _ -`.
    ///   - type: The container's value type, as the app's `StateContainer` encodes it (JSON).
    ///   - client: A client whose `run()` runs while the container is hosted.
    ///   - log: The log's table (see `ReplicatedStore`); one per hosted container, the same on every instance.
    ///   - onIssue: Where the log's issues go; standard error by default.
    /// - Returns: The replication to run; the container answers 503 until it runs and has caught up.
    /// - Throws: `StorageError.Kind.invalidConfiguration` for an invalid `log` name.
    public func host<Value: Codable & Sendable>(
        container key: String,
        of type: Value.Type,
        replicatedOn client: PostgresClient,
        log: String,
        onIssue: @escaping @Sendable (ReplicationIssue) -> Void = ReplicationIssue.standardError
    ) throws(StorageError) -> SyncReplication {
        let hosted = try ReplicatedHostedContainer(client: client, log: log, reject: rejectingAllBut(type), onIssue: onIssue)
        host(container: key) { hosted }
        return SyncReplication(hosted.replica, following: hosted.following)
    }
}
