import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
@testable import StatehousePostgres
import Statehouse
import StatehouseTestSupport
import Testing

/// Defects found by the session-10 review of the PostgreSQL module, each shown failing before its fix.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct AttackS10Tests {
    /// An append whose statement was sent when the store's `run()` was cancelled may still commit (cancelling the
    /// waiting task does not take back a statement the server has). The store used to report such a batch as
    /// "applied nowhere" (`send` threw, a `.actionNotAppended` issue) and drop it, while the log held it: a caller
    /// that believed the error and sent again applied the action twice. It must stay queued, and the next `run()`
    /// find it in the log.
    @Test func anAppendInFlightWhenRunIsCancelledIsNotReportedAsAppliedNowhere() async throws {
        let cluster = try cluster
        try await AppendLandingAfterTheRun.afterTheFirstRun { store, landing, issues, log in
            // An action dispatched while the store is stopped queues behind that batch. The next run must look the
            // batch up as it was sent: one led by the same action but holding this one too was found in the log
            // by its first action, and this one counted as appended and lost (found by the session-13 review).
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
    /// The listening connection terminated again and again: after each, a change made by another client reaches
    /// the watcher, and a watch added just after the termination (while the listener may still think it listens)
    /// gets its first call.
    @Test func watchesFollowChangesAcrossRepeatedlyTerminatedListeners() async throws {
        let cluster = try cluster
        try await withStorage { storage in
            let calls = Recorder<Void>()
            let watch = try storage.watchChanges(of: "k") { calls.append(()) }
            #expect(await eventually { calls.count == 1 })
            try await withClient { otherClient in
                let other = PostgresStorage(client: otherClient, table: storage.table)
                for round in 1...10 {
                    _ = try cluster.terminateConnections()
                    let firstCalls = Recorder<Void>()
                    let added = try storage.watchChanges(of: "added \(round)") { firstCalls.append(()) }
                    try await onThread { try other.save(Data("\(round)".utf8), key: "k") }
                    #expect(await eventually { calls.count >= round + 1 }, "round \(round): the change was not reported")
                    #expect(await eventually { firstCalls.count >= 1 }, "round \(round): no first call")
                    added.cancel()
                }
            }
            watch.cancel()
        }
    }
}
