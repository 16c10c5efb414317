import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Loops that retry every failure (a storage's listener, a replicated store following its log) say nothing of a
/// failure that trying again mends: a lost connection, a session ended by the server, another session's lock in the
/// way. Once it is mended, changes reach the watcher and the store.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct TransientFailureReportTests {
    /// A server with `idle_session_timeout` (PostgreSQL 14+; a DBA may set it for every role) ends each session that
    /// waits for its client longer than that, with a FATAL 57P05, and a listening connection does nothing but wait.
    /// Listening again on a new connection mends it: a lost connection, never a refusal to report, however often
    /// the timeout strikes (here every 300 ms, at least eight times).
    @Test func sessionsEndedForIdlingAreLostConnectionsNotRefusals() async throws {
        let cluster = try cluster
        var configuration = cluster.clientConfiguration
        configuration.options.additionalStartupParameters = [("idle_session_timeout", "300")]
        let endedBefore = try serverLog(count: "idle-session timeout")
        try await Self.expectNothingReported(configuration: configuration) { _, _ in
            // Both listening connections (and idle pooled ones) ended so a few times each.
            #expect(await eventually(timeout: .seconds(120)) {
                ((try? serverLog(count: "idle-session timeout")) ?? 0) >= endedBefore + 8
            })
        }
    }

    /// Backends terminated again and again, some while (re)listening, then a server restart: all lost connections,
    /// none reported, and changes made afterwards reach the watcher and the store.
    @Test func terminationsRacingListenAndARestartAreNotReported() async throws {
        let cluster = try cluster
        try await Self.expectNothingReported(configuration: cluster.clientConfiguration) { _, _ in
            // Each psql run takes some tens of milliseconds: the listeners reconnect (10 ms backoff after each
            // successful catch-up) and are cut off at every stage, LISTEN included.
            for _ in 0..<40 { _ = try cluster.terminateConnections() }
            try cluster.restart()
        }
    }

    /// Another session holds the storage's table and the log locked: the listener's catch-up and the store's fail
    /// at their lock timeout, again and again. Another session in the way, not a refusal: nothing is reported, and
    /// once the lock is gone both see what changed.
    @Test func lockTimeoutsAreNotReported() async throws {
        let cluster = try cluster
        var configuration = cluster.clientConfiguration
        configuration.options.additionalStartupParameters = [
            ("application_name", "lock_timeout_waiter"), ("lock_timeout", "100"),
        ]
        let timedOutBefore = try serverLog(count: "due to lock timeout")
        try await Self.expectNothingReported(configuration: configuration) { storage, store in
            let holder = try holdInPsql("""
                SET application_name = 'lock_timeout_holder'; BEGIN;
                LOCK TABLE \(storage.table), \(store.log) IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600);
                """)
            #expect(await eventually(every: psqlPolling) {
                (try? cluster.sql("""
                    SELECT count(*) FROM pg_stat_activity
                    WHERE application_name = 'lock_timeout_holder' AND wait_event = 'PgSleep'
                    """)) == "1"
            })
            // The listener listens again, and its catch-up waits for the lock; the store's catch-ups (every second)
            // wait for it anyway.
            try cluster.sql("""
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE application_name = 'lock_timeout_waiter' AND query LIKE 'LISTEN%'
                """)
            #expect(await eventually(timeout: .seconds(60)) {
                ((try? serverLog(count: "due to lock timeout")) ?? 0) >= timedOutBefore + 4
            })
            try cluster.sql("""
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'lock_timeout_holder'
                """)
            await holder.value
        }
    }

    /// A watched storage and a replicated store on a client made with `configuration`: `disrupt` runs once both are
    /// live; then a change by another client must reach both, and nothing may have been reported.
    private static func expectNothingReported(
        configuration: PostgresClient.Configuration,
        disrupt: (PostgresStorage, ReplicatedStore<Counter, CounterAction>) async throws -> Void
    ) async throws {
        let diagnostics = Recorder<StatehouseDiagnostic>()
        let issues = Recorder<ReplicationIssue>()
        try await StatehouseDiagnostics.$handler.withValue({ diagnostics.append($0) }) {
            let client = PostgresClient(configuration: configuration)
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
                defer { group.cancelAll() }
                let storage = PostgresStorage(client: client, table: uniqueTable())
                let calls = Recorder<Void>()
                let watch = try storage.watchChanges(of: "k") { calls.append(()) }
                defer { watch.cancel() }
                let store = try makeReplica(client, log: uniqueTable(), issues: issues)
                try await whileRunning([store]) {
                    #expect(await eventually { calls.count == 1 })
                    await store.waitUntilCaughtUp()
                    try await disrupt(storage, store)
                    try await withClient { other in
                        let writer = PostgresStorage(client: other, table: storage.table)
                        try await onThread { try writer.save(Data("2".utf8), key: "k") }
                        let otherStore = try makeReplica(other, log: store.log)
                        try await whileRunning([otherStore]) { _ = try await otherStore.send(.numbered(1)) }
                    }
                    #expect(await eventually(timeout: .seconds(120)) { calls.count >= 2 }, "a change was not pushed")
                    #expect(await everyStore([store], appliedThrough: 1, timeout: .seconds(120)))
                }
            }
        }
        #expect(diagnostics.elements.isEmpty, "\(diagnostics.elements)")
        #expect(issues.elements.isEmpty, "\(issues.elements)")
    }
}
