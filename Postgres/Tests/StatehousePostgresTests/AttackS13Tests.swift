import PostgresTestCluster
@testable import StatehousePostgres
import Statehouse
import StatehouseTestSupport
import Testing

/// Defects found by the session-13 review of the replicated store, each shown failing before its fix.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct AttackS13Tests {
    /// A batch whose append landed after the run ended is looked up first by the next run. When that lookup is
    /// refused for a reason reconnecting does not mend (here a column renamed by hand), the store used to fail the
    /// batch: `send` threw "applied nowhere" and an `.actionNotAppended` issue said so, while the log held it. It
    /// must stay queued, be said once as `.actionOutcomeUnknown`, and be settled once the log can be read.
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
