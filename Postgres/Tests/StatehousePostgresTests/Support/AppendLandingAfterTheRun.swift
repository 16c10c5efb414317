import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
@testable import StatehousePostgres
import StatehouseTestSupport
import Testing

/// A `send` whose append reached the server and committed only after the store's `run()` was cancelled: the batch
/// is in the log, but the store never took in the answer, so the next `run()` must settle it.
struct AppendLandingAfterTheRun {
    /// What `send` returned (or threw), once it returns.
    let sent = Recorder<Result<Int64, StorageError>>()
    let sender: Task<Void, Never>

    /// Sends `action` while another session holds the log's head row lock, so that the append waits on the server,
    /// sent; cancels `run`; then lets the append commit.
    init(
        _ action: CounterAction,
        to store: ReplicatedStore<Counter, CounterAction>,
        running run: Task<Void, any Error>,
        client: PostgresClient,
        log: String,
        cluster: PostgresTestCluster
    ) async throws {
        let logger = Logger(label: "test")
        let holding = Recorder<Void>()
        let release = AsyncStream<Void>.makeStream()
        let holder = Task(executorPreference: PostgresStorage.executor) {
            try await client.withConnection { connection in
                try await connection.run("BEGIN", logger: logger)
                try await connection.run("SELECT sequence FROM \(unescaped: log)_head FOR UPDATE", logger: logger)
                holding.append(())
                for await _ in release.stream { break }
                try await connection.run("COMMIT", logger: logger)
            }
        }
        #expect(await eventually { holding.count == 1 })

        let sent = sent
        sender = Task {
            do throws(StorageError) {
                sent.append(.success(try await store.send(action)))
            } catch {
                sent.append(.failure(error))
            }
        }
        let waitingOnTheLock = """
            SELECT count(*) FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO \(log) %'
            """
        #expect(await eventually(every: psqlPolling) { (try? cluster.sql(waitingOnTheLock)) == "1" })

        run.cancel()
        _ = await run.result
        release.continuation.yield()
        release.continuation.finish()
        try await holder.value
        #expect(await eventually(every: psqlPolling) { (try? cluster.sql("SELECT count(*) FROM \(log)")) == "1" })
    }

    /// Runs `body` with a store on a new log whose first `run()` ended while the append of `.numbered(1)` was
    /// waiting on the server, and which then landed; the store is not running, and `issues` gets its issues.
    static func afterTheFirstRun(
        _ body: @Sendable (
            _ store: ReplicatedStore<Counter, CounterAction>, _ landing: AppendLandingAfterTheRun,
            _ issues: Recorder<ReplicationIssue>, _ log: String
        ) async throws -> Void
    ) async throws {
        let cluster = try cluster
        try await withClient { client in
            let log = uniqueTable()
            let issues = Recorder<ReplicationIssue>()
            let store = try makeReplica(client, log: log, issues: issues)
            let firstRun = Task { try await store.run() }
            await store.waitUntilCaughtUp()
            let landing = try await AppendLandingAfterTheRun(
                .numbered(1), to: store, running: firstRun, client: client, log: log, cluster: cluster
            )
            try await body(store, landing, issues, log)
        }
    }
}
