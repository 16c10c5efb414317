import Foundation
import NIOCore
import Statehouse

extension ReplicatedStore {
    /// Follows the log and appends the actions dispatched here, until the calling task is cancelled.
    ///
    /// Run it for as long as the store is used, beside the client's `run()`:
    ///
    /// ```swift
    /// try await withThrowingDiscardingTaskGroup { group in
    ///     group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
    ///     group.addTask { try await replica.run() }
    ///     …
    /// }
    /// ```
    ///
    /// It makes the log's tables if they do not exist, takes the newest snapshot, applies the actions after it and
    /// then each action as it is appended (announced by `NOTIFY`). A lost connection or an unreachable server is not
    /// an error: it listens again with backoff and reads on from the last action it applied. Its work runs on a
    /// SwiftNIO event loop; the reducer and subscribers run on a queue of the store.
    ///
    /// Once it ended (its task cancelled), it may be run again: it appends what was dispatched meanwhile and follows
    /// on from the last action it applied.
    ///
    /// - Throws: `StorageError.Kind.undecodable` if an action in the log does not decode as `Action` (written by
    ///   another version of the program?): the store stops rather than skip it, which would make it diverge.
    ///   `StorageError.Kind.invalidConfiguration` if the store's `run()` is running already.
    public func run() async throws(StorageError) {
        let (replicator, inner, deliveries) = (self.replicator, self.inner, self.deliveries)
        guard replicator.startRunning() else {
            throw StorageError(
                .invalidConfiguration, key: nil, operation: .open,
                message: """
                    The replicated store on \(log) is running already: it would append its actions twice. Run it \
                    from one task at a time.
                    """
            )
        }
        defer { replicator.stopRunning() }
        let decoder = JSONDecoder()
        do {
            try await withTaskExecutorPreference(replicator.log.executor) {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { await replicator.appendLoop() }
                    group.addTask {
                        try await replicator.follow { encoded, sequence in
                            guard let state = try? decoder.decode(State.self, from: Data(encoded.readableBytesView)) else {
                                replicator.onIssue(ReplicationIssue(
                                    kind: .unusableSnapshot, sequence: sequence,
                                    message: """
                                        The snapshot after action #\(sequence) of \(replicator.log.names.log) does not \
                                        decode as \(State.self): replaying the whole log instead. It will be replaced \
                                        by the next snapshot.
                                        """
                                ))
                                return false
                            }
                            deliveries.async { inner.dispatch(.restore(state, sequence: sequence)) }
                            return true
                        } apply: { entry throws(StorageError) in
                            let action = try Self.decode(entry, with: decoder, log: replicator.log.names.log)
                            let local = entry.origin == replicator.origin ? entry.local : nil
                            deliveries.async { inner.dispatch(.apply(action, sequence: entry.sequence, local: local)) }
                        }
                    }
                    // Either ends only when cancelled, or the follower with an error: stop the other.
                    defer { group.cancelAll() }
                    try await group.next()
                }
            }
        } catch let error as StorageError {
            throw error
        } catch {
            // Cancelled: the store stops following.
        }
    }

    private static func decode(_ entry: LogEntry, with decoder: JSONDecoder, log: String) throws(StorageError) -> Action {
        do {
            return try decoder.decode(Action.self, from: Data(entry.action.readableBytesView))
        } catch {
            throw StorageError(
                .undecodable, key: nil, operation: .decode,
                message: """
                    Action #\(entry.sequence) of the log \(log) does not decode as \(Action.self) \
                    (\(StorageError.CodingFailure(error))); the replicated store stopped following the log rather \
                    than skip it. Run a version of the program whose \(Action.self) decodes every action in the log.
                    """,
                cause: error
            )
        }
    }
}
