import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
@testable import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Every statement the storage sends is answered, even on a connection the server has just terminated: postgres-nio
/// 1.33.2 never answers a query written to a channel that has closed, and its pool can lease such a connection.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct KilledConnectionStatementTests {
    /// Six workers run transactions while every connection is terminated every 50 ms. With postgres-nio's own
    /// `query`, all six hang within seconds, each on a statement sent to a leased connection that had closed; each
    /// must instead fail (and lease again) and end its loop once the storm is over.
    @Test func statementsOnConnectionsTheServerTerminatesAreAlwaysAnswered() async throws {
        let cluster = try cluster
        let table = uniqueTable()
        try cluster.sql("CREATE TABLE \(table) (k int PRIMARY KEY, v int); INSERT INTO \(table) VALUES (1, 0)")
        let stop = Recorder<Void>()
        let finished = Recorder<Int>()
        let refusedBeforeSending = Recorder<Void>()
        let logger = Logger(label: "test")
        try await withClient { client in
            for worker in 0..<6 {
                Task(executorPreference: PostgresStorage.executor) {
                    while stop.count == 0 {
                        do {
                            try await client.withConnection { connection in
                                try await connection.run("BEGIN", logger: logger)
                                try await connection.run(
                                    "SELECT v FROM \(unescaped: table) WHERE k = 1 FOR UPDATE", logger: logger
                                )
                                try await connection.run("UPDATE \(unescaped: table) SET v = v + 1 WHERE k = 1", logger: logger)
                                try await connection.run("COMMIT", logger: logger)
                            }
                        } catch is PostgresFailure.ClosedBeforeSending {
                            refusedBeforeSending.append(())
                        } catch {}
                    }
                    finished.append(worker)
                }
            }
            for _ in 0..<120 {
                try await Task.sleep(for: .milliseconds(50))
                _ = try? cluster.terminateConnections()
            }
            stop.append(())
            #expect(await eventually { finished.count == 6 }, "a statement was never answered")
        }
        // The window was reached: the pool leased closed connections (seen in every run here; not a guarantee).
        print("statements refused before sending, on closed connections: \(refusedBeforeSending.count)")
    }
}
