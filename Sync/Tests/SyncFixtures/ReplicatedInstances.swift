import Foundation
import PostgresNIO
import PostgresTestCluster
import StatehousePostgres
import StatehouseServer
import StatehouseServerPostgres

/// One server instance: a server hosting `tracker` and `settings` on their logs, its PostgreSQL client and
/// replications running, and listening on loopback.
public struct Instance: Sendable {
    public var server: SyncServer
    public var running: RunningServer
    public var replications: [SyncReplication]
    public var log: String
}

/// A private cluster for one test, stopped when it ends, passed or failed.
public func withCluster<T>(_ body: (PostgresTestCluster) async throws -> T) async throws -> T {
    let cluster = try PostgresTestCluster.start()
    defer { cluster.stop() }
    return try await body(cluster)
}

/// Runs `body` with `count` instances on one log of a new cluster, each serving; stops them all whatever happens.
public func withInstances<T>(
    _ count: Int, _ body: (PostgresTestCluster, [Instance]) async throws -> T
) async throws -> T {
    try await withCluster { cluster in
        let log = "tracker_\(UUID().uuidString.prefix(8).lowercased())"
        func start(_ started: [Instance]) async throws -> T {
            guard started.count < count else { return try await body(cluster, started) }
            return try await withInstance(on: cluster, log: log) { try await start(started + [$0]) }
        }
        return try await start([])
    }
}

/// Runs `body` with one instance on `log`, serving (unless told not to wait for it: within two minutes, or this
/// throws); stops it whatever happens.
///
/// - Parameter hosting: Hosts what the instance serves, and returns the replications to run; the fixture's `tracker`
///   and `settings` (``Fixture/hostReplicated(on:client:log:)``) unless given.
public func withInstance<T>(
    on cluster: PostgresTestCluster, log: String, waitsUntilServing: Bool = true,
    hosting: ((SyncServer, PostgresClient) throws -> [SyncReplication])? = nil,
    _ body: (Instance) async throws -> T
) async throws -> T {
    let client = PostgresClient(configuration: cluster.clientConfiguration)
    let server = SyncServer(storage: try .inMemory(), tokens: try Fixture.tokens())
    let replications = try hosting?(server, client) ?? Fixture.hostReplicated(on: server, client: client, log: log)
    let following = Task {
        await withDiscardingTaskGroup { group in
            group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
            for replication in replications { group.addTask { try? await replication.run() } }
        }
    }
    defer { following.cancel() }
    let deadline = ContinuousClock.now + .seconds(120)
    while waitsUntilServing, !replications.allSatisfy(\.isServing) {
        guard ContinuousClock.now < deadline else { throw RunningServer.ServerDidNotStart() }
        try await Task.sleep(for: .milliseconds(5))
    }
    return try await withRunningServer(server) { running in
        try await body(Instance(server: server, running: running, replications: replications, log: log))
    }
}
