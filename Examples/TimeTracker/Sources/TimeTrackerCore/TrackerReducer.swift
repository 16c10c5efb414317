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
            return .run { [self] send in await publishSnapshot(send) }
        case .loaded(let newState, let answering):
            state.projects = newState.projects
            // The send may only queue the action (another thread is dispatching): the reply waits until it is in.
            guard let answering else { return .none }
            return .run { _ in answering.send() }
        case .lostDatabase(let error):
            state.problem = error.description
            return .none
        }
    }

    /// A snapshot that cannot be read is skipped (the next change reads again), and `answering` answered at once.
    private func publishSnapshot(_ send: Send<TrackerStoreAction>, answering: PendingAnswer? = nil) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            reading.async { [database] in
                if let snapshot = try? database.snapshot() {
                    send(.loaded(snapshot, answering: answering))
                } else {
                    answering?.send()
                }
                done.resume()
            }
        }
    }
}
