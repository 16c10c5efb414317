import Logging
import PostgresNIO

/// Keeps a listening connection honest: nothing arrives on it while nothing changes, so one that died without a word
/// (a NAT or a firewall forgot it, the server's process hangs: no reset ever comes) would be waited on forever.
enum Heartbeat {
    static let interval = Duration.seconds(5)
    static let timeout = Duration.seconds(10)
    /// Named, so that an administrator (or a test) can tell the listening connection in `pg_stat_activity`.
    static let query: PostgresQuery = "SELECT 1 /* StatehousePostgres heartbeat */"

    /// Runs `body` (everything the listener does on `connection`: migrating, `LISTEN`, catching up, waiting for
    /// notifications) while asking `connection` to answer every ``interval``. A question not answered within
    /// ``timeout`` closes the connection, which fails whatever `body` waits for: a wait on a dead connection is
    /// given up by nothing else. The connection is closed when `body` ends, too.
    static func whileAnswering(
        _ connection: PostgresConnection,
        on executor: any TaskExecutor,
        logger: Logger,
        _ body: () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            defer { group.cancelAll() }
            // Ends by closing the connection, also when cancelled (the listener's task was, or `body` ended), and the
            // group waits for it: `body` may be waiting for notifications, which no cancellation ends.
            group.addTask {
                defer { close(connection) }
                while true {
                    try await Task.sleep(for: interval)
                    try await bounded(by: timeout, on: executor) {
                        try await connection.run(query, logger: logger)
                    }
                }
            }
            try await connection.run(lockTimeout, logger: logger)
            try await body()
        }
    }

    /// Set on the connection before `body` runs. A statement waiting for a lock (another session's `ALTER TABLE`, a
    /// migration) holds up the heartbeat's question behind it, which then closes the connection; but the server
    /// notices a closed client only when it next reads, so the closed session would go on waiting, and each
    /// reconnection would queue one more session behind the lock. With this the server gives up the wait first,
    /// and the listener tries again later (lock timeouts are not reported).
    static let lockTimeout: PostgresQuery = "SET lock_timeout = '5s'"

    private static func close(_ connection: PostgresConnection) {
        _ = connection.close() as EventLoopFuture<Void>
    }
}
