import Dispatch
import Logging
import NIOConcurrencyHelpers
import PostgresNIO
import Statehouse

/// The storage's one `LISTEN` connection, shared by every watched key: it runs while anything is watched, tells
/// watchers when their key's row changes, and after a lost connection listens again (with backoff) and catches up
/// by version, so that a change made meanwhile reaches each watcher once.
final class ChangeListener: Sendable {
    private struct State {
        var registry = WatchRegistry()
        /// Listens while anything is watched.
        var task: Task<Void, Never>?
        /// Whether the channel is being listened to now: a key watched from then on is caught up by itself.
        var isListening = false
        /// Counts the listening tasks, so that one ending late does not speak for its successor.
        var generation: UInt64 = 0
    }

    private let runner: OperationRunner
    private let state = NIOLockedValueBox(State())
    /// Calls the watchers in the order of the changes, off the event loop (they may take their time, or use the
    /// storage, which refuses to block an event loop).
    private let delivery = DispatchQueue(label: "StatehousePostgres.watch")

    init(runner: OperationRunner) {
        self.runner = runner
    }

    deinit {
        state.withLockedValue { $0.task }?.cancel()
    }

    /// Calls `onChange` whenever the row of `key` changes, until the returned watch is cancelled.
    func watch(_ key: StoredKey, _ onChange: @escaping @Sendable () -> Void) -> StorageWatch {
        let digest = key.hexDigest
        let (id, firstCall) = state.withLockedValue { state in
            let added = state.registry.add(onChange, of: digest, isListening: state.isListening)
            if state.task == nil {
                state.generation += 1
                state.task = listen(generation: state.generation)
            }
            return added
        }
        // Listening already: the watch is live now, and needs no query (a failed one left the first call to the
        // key's next change). Otherwise the catch-up after listening makes the first call.
        deliver(firstCall.map { [$0] } ?? [])
        return StorageWatch { [weak self] in
            self?.stopWatching(id, of: digest)
        }
    }

    private func stopWatching(_ id: UInt64, of digest: String) {
        let task = state.withLockedValue { state -> Task<Void, Never>? in
            state.registry.remove(id, of: digest)
            guard state.registry.isEmpty else { return nil }
            defer { (state.task, state.isListening) = (nil, false) }
            return state.task
        }
        task?.cancel()
    }

    // MARK: Listening

    private func listen(generation: UInt64) -> Task<Void, Never> {
        Task(executorPreference: runner.executor) { [weak self, runner] in
            var delay = Duration.milliseconds(10)
            var refusal = RefusalReport()
            while !Task.isCancelled {
                do {
                    try await runner.client.withConnection { connection in
                        // From the lease on: a pooled connection may have died silently while idle, and then the
                        // migration, `LISTEN` or the catch-up would wait on it forever.
                        try await Heartbeat.whileAnswering(connection, on: runner.executor, logger: runner.logger) {
                            try await runner.migrateIfNeeded(on: connection)
                            try await connection.listen(on: runner.names.table) { notifications in
                                guard let self else { return }
                                let keys = self.state.withLockedValue { state in
                                    if state.generation == generation { state.isListening = true }
                                    return state.registry.keys
                                }
                                // On the listening connection, and a failure listens again: a change made while the
                                // listener was away is announced by nothing else.
                                try await self.catchUp(keys, on: connection)
                                delay = .milliseconds(10)
                                refusal.ended()
                                for try await notification in notifications {
                                    self.received(notification.payload)
                                }
                            }
                        }
                    }
                } catch where PostgresFailure.isShutDown(error) {
                    // The client shut down for good (an app ending while containers still watch): nothing to say
                    // and nothing to listen with again.
                    return
                } catch {
                    // Reconnected below; meanwhile changes are caught up when listening again. A refusal no
                    // reconnection mends (the table changed by hand) is retried too, but said once: until it is
                    // mended, containers see other processes' changes only at their safety net.
                    if !Task.isCancelled, refusal.isNews(error) {
                        StatehouseDiagnostics.report(Self.listeningRefused(runner.names.table, error))
                    }
                }
                self?.state.withLockedValue { state in
                    if state.generation == generation { state.isListening = false }
                }
                guard self != nil else { return }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(2))
            }
        }
    }

    private static func listeningRefused(_ table: String, _ error: any Error) -> StatehouseDiagnostic {
        StatehouseDiagnostic(kind: .watchingUnavailable, key: "", message: """
            StatehousePostgres: changes to the table \(table) cannot be listened for \
            (\(PostgresFailure.describe(error))), so containers persisted in it notice other processes' changes only \
            at their safety-net checks. Listening is tried again every 2 s.
            """)
    }

    /// Reads the versions of `keys` on `connection` and tells the watchers of those that changed.
    private func catchUp(_ keys: [String], on connection: PostgresConnection) async throws {
        guard !keys.isEmpty else { return }
        let query: PostgresQuery = """
            SELECT encode(key_digest, 'hex'), version FROM \(unescaped: runner.names.table)
            WHERE key_digest IN (SELECT decode(digest, 'hex') FROM unnest(\(keys)::text[]) AS digest)
            """
        var versions: [String: Int64] = [:]
        for row in try await connection.rows(query, logger: runner.logger) {
            let (digest, version) = try row.decode((String, Int64).self)
            versions[digest] = version
        }
        deliver(state.withLockedValue { $0.registry.caughtUp(versions, for: keys) })
    }

    /// Handles a payload, `"<version> <digest>"` or `"- <digest>"` (see ``Schema``); ignores any other.
    private func received(_ payload: String) {
        let parts = payload.split(separator: " ", maxSplits: 1)
        guard parts.count == 2 else { return }
        let change: WatchRegistry.Announced
        if parts[0] == "-" {
            change = .deleted
        } else if let version = Int64(parts[0]) {
            change = .version(version)
        } else {
            return
        }
        deliver(state.withLockedValue { $0.registry.notified(change, of: String(parts[1])) })
    }

    private func deliver(_ callbacks: [WatchRegistry.Callback]) {
        guard !callbacks.isEmpty else { return }
        delivery.async {
            for callback in callbacks { callback() }
        }
    }
}
