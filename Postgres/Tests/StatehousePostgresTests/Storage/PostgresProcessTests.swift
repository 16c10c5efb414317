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
            try Worker(try cluster.processArguments + ["--table", table, "--key", "stormy", "storm", "300"])
        }
        // Kill every connection every 50 ms while the workers write. Statements are sent only on open connections
        // (GuardedQueries.swift): one sent on a closed connection would stall its operation until its timeout.
        var killed = 0
        for _ in 0..<40 {
            try await Task.sleep(for: .milliseconds(50))
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
        // Every increment counted once: an update whose transaction fails runs again from the new value, and a
        // commit whose answer was lost is looked up (`pg_xact_status`). The workers print what their containers
        // report: nothing may be reported, no outcome left unknown.
        let reports = workers.flatMap(\.output).filter { $0.hasPrefix("reported") }
        #expect(reports.isEmpty, "\(reports)")
        #expect(stored == "900", "\(reports)")
    }
}
