import Foundation
import NIOConcurrencyHelpers
import NIOCore
import PostgresNIO
import Statehouse

/// A replicated store's traffic with its log: appends the actions dispatched here, in order, and follows the log,
/// handing each entry to the store once, in order. It knows actions and states only as bytes; the store encodes and
/// decodes them.
final class Replicator: Sendable {
    let log: ActionLog
    /// This store's name in the log's `origin` column: new for every store, so that two stores of one process are
    /// as distinct as two processes.
    let origin = UUID()
    let onIssue: @Sendable (ReplicationIssue) -> Void

    /// How many actions one statement appends at most.
    static let batchSize = 256
    /// How many entries one query reads at most while catching up.
    static let pageSize = 1_000

    private let queue = NIOLockedValueBox(AppendQueue())
    private let caughtUp = NIOLockedValueBox(CaughtUp.waiting([]))
    /// Wakes the running append loop. Each loop makes its own stream: a stream whose reader was cancelled is
    /// finished for good, and would leave the loop of a later `run()` with nothing to wait on.
    private let wakeUp = NIOLockedValueBox<AsyncStream<Void>.Continuation?>(nil)
    /// The last entry handed to the store, kept across runs: a `run()` started again follows on from it.
    private let followed = NIOLockedValueBox<Int64>(0)
    /// Whether a `run()` is running: two at once would append one batch twice and follow the log twice.
    private let isRunning = NIOLockedValueBox(false)
    /// The size of the batch whose append (or lookup) was on its way when the last append loop ended: the next
    /// loop must look up that batch, and only it, before appending (what was dispatched meanwhile is not in it).
    private let unsettled = NIOLockedValueBox<Int?>(nil)

    private enum CaughtUp {
        case waiting([CheckedContinuation<Int64, Never>])
        /// The first catch-up ended, having handed over the entries up to this sequence number.
        case done(Int64)
    }

    init(log: ActionLog, onIssue: @escaping @Sendable (ReplicationIssue) -> Void) {
        self.log = log
        self.onIssue = onIssue
    }

    /// How many actions dispatched here are not yet known to be in the log.
    var pendingCount: Int { queue.withLockedValue { $0.pending.count } }

    // MARK: Appending

    /// Queues `action` for the log, after every action queued before it.
    func enqueue(_ action: ByteBuffer, waiter: AppliedWaiter?) {
        _ = queue.withLockedValue { $0.enqueue(action, waiter: waiter) }
        wakeUp.withLockedValue { $0 }?.yield()
    }

    /// Marks a `run()` as started; `false` if one runs already.
    func startRunning() -> Bool {
        isRunning.withLockedValue { isRunning in
            defer { isRunning = true }
            return !isRunning
        }
    }

    /// Marks the `run()` as ended: another may start.
    func stopRunning() {
        isRunning.withLockedValue { $0 = false }
    }

    /// Appends what is queued, in order, until the task is cancelled. A lost connection or an unreachable server
    /// is retried (5 ms doubling up to 1 s) with the same batch, first asking whether its append committed.
    func appendLoop() async {
        // Holds at most one wake-up: the loop reads everything pending at each. Made before the queue is first read,
        // so an action queued in between is seen by that read or wakes the loop.
        let signal = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        wakeUp.withLockedValue { $0 = signal.continuation }
        var wakeUps = signal.stream.makeAsyncIterator()
        var uncertain = unsettled.withLockedValue { $0 }  // the size of a batch whose append may have committed
        defer { unsettled.withLockedValue { [uncertain] in $0 = uncertain } }
        var delay = Duration.milliseconds(5)
        var refusal = RefusalReport()
        while !Task.isCancelled {
            let batch = queue.withLockedValue { $0.batch(uncertain ?? Self.batchSize) }
            guard let first = batch.first else {
                guard await wakeUps.next() != nil else { return }
                continue
            }
            do {
                let committed = uncertain == nil ? false : try await log.contains(origin: origin, local: first.local)
                if !committed {
                    try await log.append(batch.map(\.action), locals: batch.map(\.local), origin: origin)
                }
                queue.withLockedValue { $0.appended(batch.count) }
                (uncertain, delay) = (nil, .milliseconds(5))
                refusal.ended()
            } catch where Task.isCancelled {
                // The run ended with the batch's append (or its lookup) on its way: the server may still commit
                // it. Neither reported nor dropped: it stays queued, and the next run looks it up first, as exactly
                // this batch: a larger one led by the same action would, once the lookup found that action, count
                // what was dispatched meanwhile as appended.
                uncertain = batch.count
                return
            } catch where Self.isRetryable(error) {
                uncertain = batch.count
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            } catch where uncertain != nil {
                // An earlier send of this very batch may still commit: failing it would tell its senders that it
                // was applied nowhere, and one that sent it again would apply it twice. It stays queued, ahead of
                // what was dispatched after it, and is looked up again until the database answers.
                if refusal.isNews(error) { reportUnsettledBatch(batch.count, error) }
                try? await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            } catch {
                uncertain = nil
                fail(batch.count, error)
            }
        }
    }

    /// A batch that may have been appended cannot be looked up: said once, until it can.
    private func reportUnsettledBatch(_ count: Int, _ error: any Error) {
        let message = """
            \(count) action(s) dispatched to the replicated store on \(log.names.log) may have been appended, and \
            whether they were cannot be read (\(PostgresFailure.describe(error))): they stay queued, and the actions \
            dispatched after them wait. Check the log's tables and the role's privileges on them.
            """
        onIssue(ReplicationIssue(kind: .actionOutcomeUnknown, sequence: nil, message: message))
    }

    /// The server's answer to an append says it cannot succeed: the batch is dropped and its waiters told.
    private func fail(_ count: Int, _ error: any Error) {
        let message = """
            \(count) action(s) dispatched to the replicated store on \(log.names.log) could not be appended \
            (\(PostgresFailure.describe(error))) and were not applied anywhere. Check the log's tables and the \
            role's privileges on them.
            """
        let storageError = StorageError(
            .io, key: nil, operation: .save, message: message, cause: PostgresErrorCause.redacting(error)
        )
        for waiter in queue.withLockedValue({ $0.failed(count) }) { waiter.resume(throwing: storageError) }
        onIssue(ReplicationIssue(kind: .actionNotAppended, sequence: nil, message: message))
    }

    /// A lost connection, no answer in time, or two appends of one batch (the first one's answer was lost, and it committed late).
    private static func isRetryable(_ error: any Error) -> Bool {
        PostgresFailure.isTransient(error) || error is TimedOut
            || (error as? PSQLError)?.serverInfo?[.sqlState] == "23505"
    }

    /// This store's action number `local` was applied here, as number `sequence`: tells its waiter.
    func applied(local: Int64, sequence: Int64) {
        queue.withLockedValue { $0.applied(local: local) }?.resume(returning: sequence)
    }

    // MARK: Following

    /// Follows the log until the task is cancelled: the newest snapshot first (handed to `restore`, which says
    /// whether it could use it), then every entry after it, in order, to `apply`; then, listening, each entry as
    /// it is appended. After a lost connection it listens again (10 ms doubling up to 2 s) and reads on from the
    /// last entry it handed over, so no entry is handed over twice or skipped; so does a follow started again after
    /// one was cancelled, taking a snapshot only if it is newer than that entry.
    ///
    /// - Throws: What `apply` throws: an entry this store cannot decode, which it must not skip.
    func follow(
        restore: @Sendable (_ state: ByteBuffer, _ sequence: Int64) -> Bool,
        apply: @Sendable (LogEntry) throws(StorageError) -> Void
    ) async throws(StorageError) {
        var handedOver = followed.withLockedValue { $0 }
        var restored = false
        var delay = Duration.milliseconds(10)
        var refusal = RefusalReport()
        while !Task.isCancelled {
            do {
                if !restored {
                    if let snapshot = try await log.newestSnapshot(before: origin), snapshot.sequence > handedOver,
                       restore(snapshot.state, snapshot.sequence) {
                        handedOver = snapshot.sequence
                        followed.withLockedValue { $0 = snapshot.sequence }
                    }
                    restored = true
                }
                try await log.client.withConnection { connection in
                    // A pooled connection may have died silently while idle: the migration or `LISTEN` would then
                    // wait on it forever (the safety net's reads start only once listening).
                    try await Heartbeat.whileAnswering(connection, on: log.executor, logger: log.logger) {
                        try await log.migrateIfNeeded(on: connection)
                        try await connection.listen(on: log.names.log) { notifications in
                            // The backoff starts again once the log was read, not when listening starts: a log
                            // that cannot be read was read again every 10 ms (hundreds of failures a second).
                            try await followListening(to: notifications, after: &handedOver, apply) {
                                delay = .milliseconds(10)
                                refusal.ended()
                            }
                        }
                    }
                }
            } catch let error as StorageError {
                throw error
            } catch {
                // Listened again below, and caught up from `handedOver`. A refusal no reconnection mends (a table
                // changed by hand, a privilege revoked, the client shut down) is retried too, but said once.
                if !Task.isCancelled, !(error is ListeningEnded), refusal.isNews(error) {
                    reportUnreadableLog(error)
                }
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(2))
        }
    }

    /// Catches up, then again at each notification and at least every second (a safety net: a listening connection
    /// whose backend is gone was seen to stay silent rather than fail), until the notifications end.
    ///
    /// - Throws: ``ListeningEnded`` when the notifications end, to listen again; a failed catch-up's error.
    private func followListening(
        to notifications: PostgresNotificationSequence,
        after handedOver: inout Int64,
        _ apply: @Sendable (LogEntry) throws(StorageError) -> Void,
        caughtUp: () -> Void
    ) async throws {
        let wakeUps = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        try await withThrowingTaskGroup(of: Void.self) { group in
            defer { group.cancelAll() }
            group.addTask {
                defer { wakeUps.continuation.finish() }
                for try await _ in notifications { wakeUps.continuation.yield() }
            }
            group.addTask {
                while true {
                    try await Task.sleep(for: .seconds(1))
                    wakeUps.continuation.yield()
                }
            }
            try await catchUp(after: &handedOver, apply)
            caughtUp()
            markCaughtUp(through: handedOver)
            for await _ in wakeUps.stream { try await catchUp(after: &handedOver, apply) }
            try Task.checkCancellation()
            throw ListeningEnded()
        }
    }

    /// The notifications of a listening connection ended: its connection was lost.
    private struct ListeningEnded: Error {}

    private func reportUnreadableLog(_ error: any Error) {
        onIssue(ReplicationIssue(kind: .logUnreadable, sequence: nil, message: """
            The replicated store could not read its log \(log.names.log) (\(PostgresFailure.describe(error))). It \
            keeps its state, tries again every 2 s, and catches up once the log can be read.
            """))
    }

    /// Hands over every entry after `sequence`, advancing it. Stops at a gap (there is none: see ``LogSchema``).
    private func catchUp(after sequence: inout Int64, _ apply: @Sendable (LogEntry) throws(StorageError) -> Void) async throws {
        while true {
            let entries = try await log.entries(after: sequence, limit: Self.pageSize)
            for entry in entries {
                guard entry.sequence == sequence + 1 else { return }
                try apply(entry)
                sequence = entry.sequence
                followed.withLockedValue { $0 = entry.sequence }
            }
            if entries.count < Self.pageSize { return }
        }
    }

    /// Waits until the log was read to its end once (``follow(restore:apply:)`` is running and listening).
    /// - Returns: The sequence number of the last entry that first catch-up handed over.
    func waitUntilCaughtUp() async -> Int64 {
        await withCheckedContinuation { continuation in
            let done = caughtUp.withLockedValue { state -> Int64? in
                switch state {
                case .done(let sequence):
                    return sequence
                case .waiting(var waiters):
                    waiters.append(continuation)
                    state = .waiting(waiters)
                    return nil
                }
            }
            if let done { continuation.resume(returning: done) }
        }
    }

    private func markCaughtUp(through sequence: Int64) {
        let waiters = caughtUp.withLockedValue { state -> [CheckedContinuation<Int64, Never>] in
            guard case .waiting(let waiters) = state else { return [] }
            state = .done(sequence)
            return waiters
        }
        for waiter in waiters { waiter.resume(returning: sequence) }
    }

    // MARK: Snapshots

    /// Stores `state`, the encoded state after `sequence`, in the background. A snapshot that fails to be stored
    /// only makes catching up longer, until the next.
    func saveSnapshot(_ state: ByteBuffer, after sequence: Int64) {
        let log = log
        Task(executorPreference: log.executor) {
            try? await log.saveSnapshot(state, after: sequence)
        }
    }
}
