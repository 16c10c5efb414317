import Foundation
import PostgresTestCluster
import StatehouseTestSupport
import Testing

/// Replicated stores in several processes on one log (the worker's `replicate` command): they converge, a process
/// started afterwards catches up, and killed connections lose or double nothing.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct ReplicatedProcessTests {
    /// Starts `count` workers that each dispatch `actions` increments to a replicated store on `log`.
    private func startWorkers(_ count: Int, log: String, actions: Int) throws -> [Worker] {
        try (0..<count).map { _ in
            try Worker(try cluster.processArguments + [
                "--table", log, "--key", "unused", "--snapshot-every", "50", "replicate", "\(actions)",
            ])
        }
    }

    /// Tells each worker the total, and returns each one's final line ("final <count> <checksum> <sequence>").
    private func finals(of workers: [Worker], total: Int) async -> [String] {
        var finals: [String] = []
        for worker in workers {
            #expect(await worker.line(startingWith: "dispatched", timeout: .seconds(300)) != nil, "\(worker.output)")
            worker.send("expect \(total)")
        }
        for worker in workers {
            finals.append(await worker.line(startingWith: "final", timeout: .seconds(300)) ?? "none: \(worker.output)")
            #expect(await worker.finish() == 0)
        }
        return finals
    }

    @Test func threeProcessesDispatchingIncrementsEndEqualAndAProcessStartedAfterwardsCatchesUp() async throws {
        let log = uniqueTable()
        let workers = try startWorkers(3, log: log, actions: 500)
        let ends = await finals(of: workers, total: 1_500)
        #expect(ends.count == 3)
        #expect(Set(ends).count == 1, "\(ends)")
        #expect(ends.first?.hasPrefix("final 1500 ") == true, "\(ends)")
        #expect(ends.first?.hasSuffix(" 1500") == true, "\(ends)")
        #expect(try cluster.sql("SELECT count(*), max(sequence) FROM \(log)") == "1500|1500")
        // Taken in the background by the process that appended each 50th action (which may have ended before).
        #expect(try cluster.sql("SELECT count(*) > 0 FROM \(log)_snapshots") == "t")

        let fresh = try startWorkers(1, log: log, actions: 0)
        #expect(await finals(of: fresh, total: 1_500) == [ends.first ?? ""])
    }

    @Test func processesWhoseConnectionsAreKilledMidStreamConvergeWithNoActionLostOrDoubled() async throws {
        let log = uniqueTable()
        let workers = try startWorkers(3, log: log, actions: 500)
        var killed = 0
        for _ in 0..<10 {
            try await Task.sleep(for: .milliseconds(100))
            killed += try cluster.terminateConnections()
        }
        #expect(killed > 0)
        let ends = await finals(of: workers, total: 1_500)
        #expect(Set(ends).count == 1, "\(ends)")
        #expect(ends.first?.hasPrefix("final 1500 ") == true, "\(ends)")
        #expect(try cluster.sql("SELECT count(*), max(sequence) FROM \(log)") == "1500|1500")
    }
}
