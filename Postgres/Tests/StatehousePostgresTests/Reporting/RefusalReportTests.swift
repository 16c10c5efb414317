import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
@testable import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Loops that retry every failure (a replicated store following its log, a storage listening for changes) say so
/// once when the server refuses them for a reason no reconnection mends, and follow again once it is mended.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct RefusalReportTests {
    @Test func aRefusalIsToldOnceUntilTheLoopWorksAgainAndALostConnectionNever() {
        var report = RefusalReport()
        let refused = PostgresFailure.OutcomeUnknown(underlying: nil)  // any error that is not a lost connection
        var told: [Bool] = []
        told.append(report.isNews(PostgresFailure.ClosedBeforeSending()))
        told.append(report.isNews(TimedOut()))
        told.append(report.isNews(refused))
        told.append(report.isNews(refused))
        report.ended()
        told.append(report.isNews(refused))
        #expect(told == [false, false, true, false, true])
    }

    /// The log's `action` column is renamed by hand: neither catching up nor appending can work. The store says so
    /// once, however often it tries again, and once the column is back it follows what another store appended.
    @Test func aLogThatCannotBeReadIsToldOnceAndFollowedAgainOnceMended() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let issues = Recorder<ReplicationIssue>()
            let follower = try makeReplica(client, log: log, issues: issues)
            let writer = try makeReplica(client, log: log)
            try await whileRunning([follower, writer]) {
                await follower.waitUntilCaughtUp()
                await writer.waitUntilCaughtUp()
                try cluster.sql("ALTER TABLE \(log) RENAME COLUMN action TO hidden")
                // The follower reads the log at least every second.
                #expect(await eventually { issues.elements.contains { $0.kind == .logUnreadable } })
                // Time for two more tries at least (every 2 s): a repeated report would show, and so would tries
                // without backoff (each failed read is a rolled-back transaction; two stores try, about 10 times
                // each at most, doubling from 10 ms; without the backoff it was hundreds).
                let failedBefore = try Int(cluster.sql(Self.rolledBack)) ?? 0
                try await Task.sleep(for: .seconds(5))
                let failed = (try Int(cluster.sql(Self.rolledBack)) ?? 0) - failedBefore
                #expect(failed < 60, "the log was read \(failed) times in 5 s")
                try cluster.sql("ALTER TABLE \(log) RENAME COLUMN hidden TO action")
                _ = try await writer.send(.numbered(7))
                #expect(await everyStore([follower], appliedThrough: 1))
                #expect(follower.state.lastNumber == 7)
            }
            let told = issues.elements.filter { $0.kind == .logUnreadable }
            #expect(told.count == 1, "\(told)")
            #expect(told.first?.message.contains("42703") == true, "\(told)")
            #expect(issues.elements.allSatisfy { $0.kind == .logUnreadable }, "\(issues.elements)")
        }
    }

    /// An app ending shuts its client down while containers still watch: the listener stops without a word, and
    /// does not try again (every 2 s, for as long as the process lives).
    @Test func aClientShutDownWhileWatchingEndsTheListenerSilently() async throws {
        let diagnostics = Recorder<StatehouseDiagnostic>()
        try await StatehouseDiagnostics.$handler.withValue({ diagnostics.append($0) }) {
            let client = PostgresClient(configuration: try cluster.clientConfiguration)
            let running = Task(executorPreference: PostgresStorage.executor) { await client.run() }
            let storage = PostgresStorage(client: client, table: uniqueTable())
            let calls = Recorder<Void>()
            let watch = try storage.watchChanges(of: "k") { calls.append(()) }
            defer { watch.cancel() }
            #expect(await eventually { calls.count == 1 })
            running.cancel()
            await running.value
            // A window for the listener to notice and say something if it would: it would within milliseconds.
            try await Task.sleep(for: .seconds(3))
        }
        #expect(diagnostics.elements.isEmpty, "\(diagnostics.elements)")
    }

    private static let rolledBack = "SELECT xact_rollback FROM pg_stat_database WHERE datname = current_database()"

    /// The storage's table loses its `version` column while its listener is away: listening again fails at its
    /// catch-up. A diagnostic says so once; once mended, a change by another client is pushed again.
    @Test func aTableThatCannotBeListenedToIsToldOnceAndListenedToAgainOnceMended() async throws {
        let diagnostics = Recorder<StatehouseDiagnostic>()
        try await StatehouseDiagnostics.$handler.withValue({ diagnostics.append($0) }) {
            try await withStorage { storage in
                let calls = Recorder<Void>()
                let watch = try storage.watchChanges(of: "k") { calls.append(()) }
                defer { watch.cancel() }
                #expect(await eventually { calls.count == 1 })
                try cluster.sql("ALTER TABLE \(storage.table) RENAME COLUMN version TO hidden")
                try cluster.sql("""
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = 'postgres' AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                    """)
                #expect(await eventually { diagnostics.elements.contains { $0.kind == .watchingUnavailable } })
                try await Task.sleep(for: .seconds(5))  // two more tries at least: a repeated report would show
                try cluster.sql("ALTER TABLE \(storage.table) RENAME COLUMN hidden TO version")
                let before = calls.count
                try await withClient { other in
                    let writer = PostgresStorage(client: other, table: storage.table)
                    try await onThread { try writer.save(Data("2".utf8), key: "k") }
                }
                #expect(await eventually { calls.count > before }, "the change was not pushed once mended")
            }
        }
        let told = diagnostics.elements
        #expect(told.count == 1, "\(told)")
        #expect(told.first?.message.contains("42703") == true, "\(told)")
    }
}
