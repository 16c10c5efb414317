import Foundation
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Several processes on one key: updates are atomic across all of them, and survive lost connections.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct PostgresProcessTests {
    @Test func threeProcessesIncrementingAThousandTimesEndAtThreeThousand() async throws {
        let table = uniqueTable()
        let workers = try (0..<3).map { _ in
            try Worker(try cluster.processArguments + ["--table", table, "--key", "counter", "increment", "1000"])
        }
        for worker in workers {
            #expect(await worker.line(startingWith: "done", timeout: .seconds(600)) != nil, "\(worker.output)")
            #expect(await worker.finish() == 0)
        }
        #expect(try cluster.sql("SELECT convert_from(value, 'UTF8') FROM \(table) WHERE key = 'counter'") == "3000")
    }

    @Test func processesWhoseConnectionsAreKilledDuringWritesCatchUpAndEndEqual() async throws {
        let table = uniqueTable()
        let workers = try (0..<3).map { _ in
            try Worker(try cluster.processArguments + ["--table", table, "--key", "stormy", "--timeout", "5", "storm", "300"])
        }
        // Kill every connection, ten times, while the workers write. (A storm of kills every 50 ms was seen to stall
        // an operation now and then until its timeout: hence the workers' short one.)
        var killed = 0
        for _ in 0..<10 {
            try await Task.sleep(for: .milliseconds(200))
            killed += try cluster.terminateConnections()
        }
        #expect(killed > 0)
        for worker in workers { #expect(await worker.line(startingWith: "flushed", timeout: .seconds(600)) != nil) }
        for worker in workers { worker.send("report") }
        var finals: [String] = []
        for worker in workers {
            let final = await worker.line(startingWith: "final")
            #expect(final != nil, "\(worker.output)")
            finals.append(final ?? "none")
            #expect(await worker.finish() == 0)
        }
        let stored = try cluster.sql("SELECT convert_from(value, 'UTF8') FROM \(table) WHERE key = 'stormy'")
        #expect(finals == Array(repeating: "final \(stored)", count: 3))
        // Every increment counted once. An update whose transaction fails runs again from the new value; one that
        // gives up says so (the workers print what their containers report). The only reports seen: a transaction
        // that stalled until its timeout after its update was computed (why it stalls is not known yet: maybe a
        // query on a killed connection that postgres-nio never answers), whose outcome is unknown, so it is not run
        // again and may be missing.
        let reports = workers.flatMap(\.output).filter { $0.hasPrefix("reported") }
        let unknownOutcomes = reports.filter { $0.contains("outcome is unknown") }.count
        // The same stall in a check for others' changes: reported, then withdrawn by the next check that reads; it
        // loses nothing (the finals above agree), but it is the stall, so it is recorded as the known issue it is.
        let stalledChecks = reports.filter { $0.contains("Could not read what others stored") }.count
        #expect(reports.count == unknownOutcomes + stalledChecks, "\(reports)")
        if stalledChecks > 0 {
            withKnownIssue("a check for others' changes stalled until its timeout", isIntermittent: true) {
                Issue.record("\(stalledChecks) stalled checks: \(reports)")
            }
        }
        if unknownOutcomes == 0 {
            #expect(stored == "900")
        } else {
            withKnownIssue("a transaction stalled until its timeout: its outcome is unknown", isIntermittent: true) {
                #expect(stored == "900", "\(reports)")
            }
            #expect(Int(stored).map { $0 >= 900 - unknownOutcomes } == true, "stored \(stored); \(reports)")
        }
        #expect(Int(stored).map { $0 <= 900 } == true, "stored \(stored): an increment was applied twice")
    }
}
