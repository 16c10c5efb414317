import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
@testable import StatehousePostgres
import StatehouseTestSupport
import Testing

/// A store whose `run()` ended (its task cancelled: a service restarted in the same process) and is started again:
/// it appends what was dispatched meanwhile, catches up, and settles a batch whose append was in flight when the run
/// ended, which may have landed: that batch stays queued until the log says, never reported as applied nowhere
/// (its caller would send it again, and it would be applied twice).
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct ReplicatedRestartTests {
    @Test func aStoreRunAgainAppendsWhatWasDispatchedMeanwhileAndCatchesUpPastNewerSnapshots() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let other = try makeReplica(client, log: log, snapshotEvery: 10)
            let restarted = try makeReplica(client, log: log, snapshotEvery: 10)
            try await whileRunning([other]) {
                try await whileRunning([restarted]) {
                    _ = try await restarted.send(.increment(tag: 1))
                    // `send` returns once the action is applied, which may be before the append loop took in its
                    // append's answer: stopped then, the store would keep the action queued for the next run.
                    #expect(await eventually { restarted.pendingCount == 0 })
                }
                // While it is stopped: another store moves the log past two snapshots, and it is dispatched to.
                for tag in 2...25 { other.dispatch(.increment(tag: Int64(tag))) }
                #expect(await everyStore([other], appliedThrough: 25))
                #expect(await eventually(every: psqlPolling) { (try? cluster.sql("SELECT max(sequence) FROM \(log)_snapshots")) == "20" })
                restarted.dispatch(.increment(tag: 26))
                try await whileRunning([restarted]) {
                    #expect(await everyStore([other, restarted], appliedThrough: 26), "\(restarted.appliedSequence)")
                    restarted.dispatch(.increment(tag: 27))
                    #expect(await everyStore([other, restarted], appliedThrough: 27))
                    // Applied, but maybe not yet taken off the queue (see above): stopping now would keep it there.
                    #expect(await eventually { restarted.pendingCount == 0 && other.pendingCount == 0 })
                }
            }
            #expect(restarted.state == other.state)
            #expect(restarted.state.count == 27)
            #expect(restarted.pendingCount == 0)
        }
    }

    @Test func aSecondRunWhileTheFirstRunsIsRefused() async throws {
        try await withClient { client in
            let store = try makeReplica(client, log: uniqueTable())
            try await whileRunning([store]) {
                _ = try await store.send(.increment(tag: 1))
                let error = await #expect(throws: StorageError.self) { try await store.run() }
                #expect(error?.kind == .invalidConfiguration)
                #expect(error?.message.contains("running already") == true)
                _ = try await store.send(.increment(tag: 2))
            }
            #expect(store.state.count == 2)
        }
    }

    /// An append whose statement was sent when `run()` was cancelled may still commit (cancelling the waiting task
    /// does not take back a statement the server has). The batch stays queued, and the next `run()` finds it in the
    /// log: `send` returns its sequence, nothing is reported, and it is applied once. An action dispatched while the
    /// store is stopped queues behind that batch; the batch is looked up as it was sent, so that the action behind it
    /// is not counted as appended with it (and lost), but appended on its own.
    @Test func anAppendInFlightWhenRunIsCancelledIsNotReportedAsAppliedNowhere() async throws {
        let cluster = try cluster
        try await AppendLandingAfterTheRun.afterTheFirstRun { store, landing, issues, log in
            // Queued behind the batch in flight; the log holds that batch alone.
            store.dispatch(.numbered(2))
            #expect(await eventually { store.pendingCount == 2 })

            let secondRun = Task { try await store.run() }
            #expect(await eventually { landing.sent.count == 1 })
            await landing.sender.value
            let outcome = try #require(landing.sent.elements.first)
            #expect(throws: Never.self) { try outcome.get() }
            #expect(await eventually { store.appliedSequence >= 2 })
            #expect(try cluster.sql("SELECT count(*) FROM \(log)") == "2")
            #expect(store.state.count == 2)
            // The follower may apply the entry before the append loop took in its lookup's answer: only that
            // answer takes the batch off the queue.
            #expect(await eventually { store.pendingCount == 0 })
            #expect(issues.elements.isEmpty)
            secondRun.cancel()
            _ = await secondRun.result
        }
    }

    /// A batch whose append landed after the run ended is looked up first by the next run. While that lookup is
    /// refused for a reason reconnecting does not mend (here a column renamed by hand), the batch stays queued and is
    /// said once as `.actionOutcomeUnknown` (never `.actionNotAppended`, with `send` throwing "applied nowhere",
    /// while the log holds it); once the log can be read it is settled, applied once.
    @Test func aBatchThatMayHaveLandedIsNotFailedWhileItsLookupIsRefused() async throws {
        let cluster = try cluster
        try await AppendLandingAfterTheRun.afterTheFirstRun { store, landing, issues, log in
            _ = try cluster.sql("ALTER TABLE \(log) RENAME COLUMN local TO local_away")

            let secondRun = Task { try await store.run() }
            let outcomeUnknown = { issues.elements.filter { $0.kind == .actionOutcomeUnknown } }
            #expect(await eventually { outcomeUnknown().count == 1 })
            #expect(landing.sent.count == 0)
            #expect(store.pendingCount == 1)

            _ = try cluster.sql("ALTER TABLE \(log) RENAME COLUMN local_away TO local")
            #expect(await eventually { landing.sent.count == 1 })
            #expect(throws: Never.self) { try landing.sent.elements.first?.get() }
            #expect(await eventually { store.pendingCount == 0 })
            #expect(try cluster.sql("SELECT count(*) FROM \(log)") == "1")
            #expect(outcomeUnknown().count == 1, "said once while refused")
            #expect(!issues.elements.contains { $0.kind == .actionNotAppended })
            secondRun.cancel()
            _ = await secondRun.result
        }
    }
}
