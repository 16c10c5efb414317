import Foundation
import Statehouse
import Synchronization

/// The tracker store's reducer: database work runs in effects, and only ``TrackerStoreAction/loaded(_:)`` changes
/// the state.
final class TrackerReducer: Sendable {
    private let database: TrackerDatabase
    private let now: @Sendable () -> Date
    /// Reading a snapshot and sending it happen under this lock, so that snapshots reach the store in the order they
    /// were read (the store applies actions in the order they are sent): an older one never lands after a newer one.
    private let reading = Mutex(())

    init(database: TrackerDatabase, now: @escaping @Sendable () -> Date) {
        self.database = database
        self.now = now
    }

    func reduce(_ state: inout TrackerState, _ action: TrackerStoreAction) -> Effect<TrackerStoreAction> {
        switch action {
        case .perform(let action, let reply):
            return .run { [self] send in
                let outcome = ActionReply.Outcome { () throws(TrackerError) in try database.apply(action, at: now()) }
                if case .success = outcome { publishSnapshot(send) }
                reply.answer(outcome)
            }
        case .refresh:
            return .run { [self] send in publishSnapshot(send) }
        case .loaded(let newState):
            state = newState
            return .none
        }
    }

    /// A snapshot that cannot be read is skipped: the next change reads again.
    private func publishSnapshot(_ send: Send<TrackerStoreAction>) {
        reading.withLock { _ in
            if let snapshot = try? database.snapshot() { send(.loaded(snapshot)) }
        }
    }
}
