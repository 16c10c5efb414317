import Logging
import PostgresNIO
import PostgresTestCluster
import StatehouseTestSupport
import Testing
@testable import StatehousePostgres

/// Results are read whole, so that a connection lost in the middle of one fails the read, not the process.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct CollectedRowsTests {
    /// postgres-nio 1.33.2 stops the process (`RowStreamStateMachine.channelReadComplete`) when a connection
    /// closes while a result streamed to an async sequence waits for its consumer: a replica reading a page of the
    /// log whose connection is terminated would die so.
    @Test func aConnectionTerminatedInTheMiddleOfALargeResultFailsTheReadNotTheProcess() async throws {
        try await withClient { client in
            let logger = Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
            // Rows that come slowly (10 s at least), so that the connection is terminated while they are still
            // coming, however long a busy machine takes to see the query running.
            let rowCount = 2_000
            /// The rows' count, or `nil` if the read failed once `terminated`. Before, a failure is the previous
            /// round's termination still showing (a connection leased closed refuses the query before sending it; the
            /// pool, reconnecting, may give up for a moment): read again until the query runs and is terminated.
            @Sendable func readRows(terminated: Recorder<Void>) async -> Int? {
                while true {
                    do {
                        return try await client.rows(
                            "SELECT repeat('x', 2000), pg_sleep(0.005) FROM generate_series(1, \(rowCount))",
                            logger: logger
                        ).count
                    } catch where terminated.elements.isEmpty && PostgresFailure.isTransient(error) {
                        continue
                    } catch {
                        return nil
                    }
                }
            }
            for _ in 0..<5 {
                let terminated = Recorder<Void>()
                async let read = readRows(terminated: terminated)
                #expect(await eventually(every: psqlPolling) {
                    (try? cluster.sql("""
                        SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'SELECT repeat%' AND state = 'active'
                        """)) == "1"
                })
                terminated.append(())
                try cluster.terminateConnections()
                let count = await read
                #expect(count == nil)
            }
        }
    }
}
