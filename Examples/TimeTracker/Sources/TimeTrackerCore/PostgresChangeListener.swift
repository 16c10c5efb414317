import Logging
import PostgresNIO

/// Listens on ``PostgresSchema/channel`` on a connection of its own, and calls `changed` for each notification, and
/// once each time it starts listening, so that a change made while it was not (before the first `LISTEN`, while
/// the connection was lost) is read too. A lost connection is replaced after a pause that doubles up to 5 s.
/// Stops when released.
///
/// Nothing arrives on a listening connection while nothing changes, so a connection that died without a word (a
/// NAT or a firewall between here and the server forgot it: no reset ever comes) would be listened on forever, and
/// no change heard again: the connection is asked to answer every ``heartbeat``, and one that does not within
/// ``heartbeatTimeout`` is closed and replaced.
final class PostgresChangeListener: Sendable {
    static let heartbeat = Duration.seconds(5)
    static let heartbeatTimeout = Duration.seconds(10)

    private let listening: Task<Void, Never>

    init(client: PostgresClient, logger: Logger, changed: @escaping @Sendable () -> Void) {
        listening = Task.detached {
            var pause = Duration.milliseconds(50)
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await Self.listen(on: connection, logger: logger, changed: changed) {
                            pause = .milliseconds(50)
                        }
                    }
                } catch {
                    logger.debug("listening for changes failed; trying again", metadata: ["pause": "\(pause)"])
                }
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    deinit {
        listening.cancel()
    }

    /// Listens on `connection` until it fails or stops answering (then it is closed), or the task is cancelled.
    private static func listen(
        on connection: PostgresConnection, logger: Logger, changed: () -> Void, started: () -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            // Whatever ends the listening, the connection is closed before the group waits for its tasks: a query
            // on a dead connection is not given up by cancelling its task, only by closing the connection.
            defer {
                group.cancelAll()
                connection.startClosing()
            }
            group.addTask { try await keepAsking(connection, logger: logger) }
            try await connection.listen(on: PostgresSchema.channel) { notifications in
                started()
                changed()
                for try await _ in notifications { changed() }
            }
        }
    }

    /// Returns never; throws (and closes `connection`) once it does not answer within ``heartbeatTimeout``, or
    /// fails.
    private static func keepAsking(_ connection: PostgresConnection, logger: Logger) async throws {
        do {
            while true {
                try await Task.sleep(for: heartbeat)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { _ = try await connection.query("SELECT 1", logger: logger).get() }
                    group.addTask {
                        try await Task.sleep(for: heartbeatTimeout)
                        // Fails the query, whose task cannot be cancelled otherwise (the group waits for it).
                        connection.startClosing()
                        throw NoAnswer()
                    }
                    defer { group.cancelAll() }
                    try await group.next()
                }
            }
        } catch {
            // Ends the listening.
            connection.startClosing()
            throw error
        }
    }

    private struct NoAnswer: Error {}
}
