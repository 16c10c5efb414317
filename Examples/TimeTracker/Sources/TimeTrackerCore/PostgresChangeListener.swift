import Logging
import PostgresNIO

/// Listens on ``PostgresSchema/channel`` on a connection of its own, and calls `changed` for each notification, and
/// once each time it starts listening, so that a change made while it was not (before the first `LISTEN`, while
/// the connection was lost) is read too. A lost connection is replaced after a pause that doubles up to 5 s.
/// Stops when released.
final class PostgresChangeListener: Sendable {
    private let listening: Task<Void, Never>

    init(client: PostgresClient, logger: Logger, changed: @escaping @Sendable () -> Void) {
        listening = Task.detached {
            var pause = Duration.milliseconds(50)
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await connection.listen(on: PostgresSchema.channel) { notifications in
                            pause = .milliseconds(50)
                            changed()
                            for try await _ in notifications { changed() }
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
}
