import Dispatch
import Foundation
import Statehouse

/// The tracker store's reducer: database work runs in effects, and only ``TrackerStoreAction/loaded(_:)`` changes
/// the state.
final class TrackerReducer: Sendable {
    private let database: TrackerDatabase
    private let now: @Sendable () -> Date
    /// Reads a snapshot and sends it, one at a time and in order, so that snapshots reach the store in the order they
    /// were read (the store applies actions in the order they are sent): an older one never lands after a newer one.
    /// A queue of its own, so that a read never holds a thread of Swift's cooperative pool.
    private let reading = DispatchQueue(label: "timetrack.snapshots")
    private let retry = RefreshRetry()

    init(database: TrackerDatabase, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.now = now
    }

    func reduce(_ state: inout TrackerState, _ action: TrackerStoreAction) -> Effect<TrackerStoreAction> {
        switch action {
        case .perform(let action, let reply):
            return .run { [self] send in
                do throws(TrackerError) {
                    let summary = try await database.apply(action, clock: now, until: reply.deadline)
                    await publishSnapshot(send, answering: PendingAnswer(reply: reply, outcome: .success(summary)))
                } catch {
                    reply.answer(.failure(error))
                }
            }
        case .refresh:
            // A change was announced: a snapshot that cannot be read now (the server out of reach, a pooled
            // connection that died without a word, given up at the statement timeout) is read again, after a pause
            // that doubles up to 5 s, until it is or the tracker closes (which cancels its effects). On PostgreSQL
            // nothing else would read it before the next change, and every view would show the old state meanwhile.
            // One refresh at a time keeps trying (``RefreshRetry``).
            return .run { [self] send in
                guard await !publishSnapshot(send), retry.snapshotFailed() else { return }
                var pause = Duration.milliseconds(50)
                while true {
                    try? await Task.sleep(for: pause)
                    pause = min(pause * 2, .seconds(5))
                    guard !Task.isCancelled else { return retry.stopped() }
                    retry.readBegins()
                    let succeeded = await publishSnapshot(send)
                    guard retry.readEnded(succeeded: succeeded) else { return }
                }
            }
        case .loaded(let newState, let answering):
            state.projects = newState.projects
            state.undoName = newState.undoName
            state.redoName = newState.redoName
            state.lastChange = newState.lastChange
            // The send may only queue the action (another thread is dispatching): the reply waits until it is in.
            guard let answering else { return .none }
            return .run { _ in answering.send() }
        case .lostDatabase(let error):
            state.problem = error.description
            return .none
        }
    }

    /// A snapshot that cannot be read is skipped, and `answering` answered at once.
    /// - Returns: Whether the snapshot was read and sent.
    @discardableResult
    private func publishSnapshot(_ send: Send<TrackerStoreAction>, answering: PendingAnswer? = nil) async -> Bool {
        await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            reading.async { [database] in
                if let snapshot = try? database.snapshot() {
                    send(.loaded(snapshot, answering: answering))
                    done.resume(returning: true)
                } else {
                    answering?.send()
                    done.resume(returning: false)
                }
            }
        }
    }
}
