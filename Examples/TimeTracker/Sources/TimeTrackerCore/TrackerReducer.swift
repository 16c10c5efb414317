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
                let outcome: ActionReply.Outcome
                do throws(TrackerError) {
                    outcome = .success(try await database.apply(action, clock: now, until: reply.deadline))
                    await publishSnapshot(send)
                } catch {
                    outcome = .failure(error)
                }
                reply.answer(outcome)
            }
        case .refresh:
            return .run { [self] send in await publishSnapshot(send) }
        case .loaded(let newState):
            state.projects = newState.projects
            return .none
        case .lostDatabase(let error):
            state.problem = error.description
            return .none
        }
    }

    /// A snapshot that cannot be read is skipped: the next change reads again.
    private func publishSnapshot(_ send: Send<TrackerStoreAction>) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            reading.async { [database] in
                if let snapshot = try? database.snapshot() { send(.loaded(snapshot)) }
                done.resume()
            }
        }
    }
}
