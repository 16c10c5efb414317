import Logging
import PostgresNIO

/// Keeps a listening connection honest: nothing arrives on it while nothing changes, so one that died without a word
/// (a NAT or a firewall forgot it, the server's process hangs: no reset ever comes) would be listened on forever.
enum Heartbeat {
    static let interval = Duration.seconds(5)
    static let timeout = Duration.seconds(10)
    /// Named, so that an administrator (or a test) can tell the listening connection in `pg_stat_activity`.
    static let query: PostgresQuery = "SELECT 1 /* StatehousePostgres heartbeat */"

    /// Runs `body` (which waits for notifications on `connection`) while asking `connection` to answer every
    /// ``interval``. A question not answered within ``timeout`` closes the connection, which ends `body` with an
    /// error: a wait on a dead connection is given up by nothing else.
    static func whileAnswering(
        _ connection: PostgresConnection,
        on executor: any TaskExecutor,
        logger: Logger,
        _ body: @escaping @Sendable () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            defer {
                group.cancelAll()
                _ = connection.close() as EventLoopFuture<Void>
            }
            group.addTask { try await body() }
            group.addTask {
                while true {
                    try await Task.sleep(for: interval)
                    try await bounded(by: timeout, on: executor) {
                        try await connection.run(query, logger: logger)
                    }
                }
            }
            try await group.next()
        }
    }
}
