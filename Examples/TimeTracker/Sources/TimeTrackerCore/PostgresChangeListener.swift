#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Logging
import PostgresNIO

/// Listens on ``PostgresSchema/channel`` on a connection of its own, and calls `changed` for each notification, and
/// once each time it starts listening, so that a change made while it was not (before the first `LISTEN`, while
/// the connection was lost) is read too. A lost connection is replaced after a pause that doubles up to 5 s.
/// Stops when released.
///
/// Nothing arrives on a listening connection while nothing changes, so a connection that died without a word (a
/// NAT or a firewall between here and the server forgot it: no reset ever comes) would be listened on forever, and
/// no change heard again: the connection is asked to answer every ``heartbeat``, from before its `LISTEN` on, and
/// one that does not within ``heartbeatTimeout`` is closed and replaced.
///
/// Each connection is opened for the listening (its handshake bounded by postgres-nio's connect timeout), never
/// leased from the client's pool: a pooled connection may be one that died the same way while idle, and a lease
/// can wait behind such a connection.
final class PostgresChangeListener: Sendable {
    static let heartbeat = Duration.seconds(5)
    static let heartbeatTimeout = Duration.seconds(10)

    private let listening: Task<Void, Never>

    init(address: PostgresAddress, logger: Logger, changed: @escaping @Sendable () -> Void) {
        listening = Task.detached {
            var pause = Duration.milliseconds(50)
            while !Task.isCancelled {
                do {
                    let connection = try await PostgresConnection.connect(
                        configuration: address.connectionConfiguration(), id: 3, logger: logger
                    )
                    // Closed before it is released, which postgres-nio requires, however the listening ended.
                    do {
                        try await Self.listen(on: connection, logger: logger, changed: changed) {
                            pause = .milliseconds(50)
                        }
                    } catch {
                        try? await connection.close()
                        throw error
                    }
                    try? await connection.close()
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
            // Whatever ends the listening, the connection is closed before the group waits for its tasks: the
            // heartbeat's query on a dead connection is given up only by closing it.
            defer {
                group.cancelAll()
                connection.startClosing()
            }
            // Ends the `LISTEN` (or the wait for notifications) by closing the connection, which fails them: they
            // cannot be given up otherwise.
            group.addTask {
                defer { connection.startClosing() }
                try await keepAsking(connection, logger: logger)
            }
            try await connection.listen(on: PostgresSchema.channel) { notifications in
                started()
                changed()
                for try await _ in notifications { changed() }
            }
        }
    }

    /// Throws once `connection` does not answer within ``heartbeatTimeout``, or fails, or the task is cancelled.
    private static func keepAsking(_ connection: PostgresConnection, logger: Logger) async throws {
        while true {
            try await Task.sleep(for: heartbeat)
            try await withThrowingTaskGroup(of: Bool.self) { group in
                // Through ``PostgresStatements/values(of:on:logger:)``, which closes the connection when its task is
                // cancelled (failing the query), and refuses a connection that closed already: postgres-nio never
                // answers a query written to a closed channel, and this group waits for its query's task.
                group.addTask {
                    _ = try await PostgresStatements.values(of: "SELECT 1", on: connection, logger: logger)
                    return true
                }
                group.addTask {
                    try await Task.sleep(for: heartbeatTimeout)
                    return false
                }
                defer { group.cancelAll() }
                guard try await group.next() == true else { throw NoAnswer() }
            }
        }
    }

    private struct NoAnswer: Error {}
}
#endif
