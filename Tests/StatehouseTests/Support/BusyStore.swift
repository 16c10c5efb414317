import Dispatch
import Foundation
@testable import Statehouse

/// Dispatches `action` to `store`, which is busy, on a thread of its own, and returns once the action is queued:
/// the dispatch waits for it to be applied, so it cannot be made on the thread that will release the store.
/// - Returns: Signalled when the dispatch has returned.
func dispatchBehindTheBusyStore<State: Sendable, Action: Sendable>(
    _ action: Action, to store: Store<State, Action>
) -> DispatchSemaphore {
    behindTheBusyStore(store) { store.dispatch(action) }
}

/// Runs `body`, which queues work on `store` and waits for it (a dispatch, a time travel), on a thread of its own, and
/// returns once the work is queued.
/// - Returns: Signalled when `body` has returned.
func behindTheBusyStore<State: Sendable, Action: Sendable>(
    _ store: Store<State, Action>, _ body: @escaping @Sendable () -> Void
) -> DispatchSemaphore {
    let queuedBefore = store.inbox.turns.withLock { $0.queue.count }
    let returned = onAThreadOfItsOwn(body)
    _ = spinWait(timeout: .seconds(signalPatience)) {
        store.inbox.turns.withLock { $0.queue.count } > queuedBefore
    }
    return returned
}

/// A store whose subscriber of `holds` blocks on the processor when that part changes, until `release` is signalled
/// (or `signalPatience` runs out): the store is busy without its state lock held (a reducer that blocked would
/// hold it, and `cancel()` rightly waits for it).
func storeWithABlockingSubscriber<State: Sendable, Action: Sendable>(
    _ initialState: State,
    reducer: @escaping @Sendable (inout State, Action) -> Void,
    holds: any KeyPath<State, Int> & Sendable
) -> (store: Store<State, Action>, blocker: SubscriptionToken, entered: DispatchSemaphore, release: DispatchSemaphore) {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let store = Store(initialState: initialState, reducer: reducer)
    let blocker = store.subscribe(holds, initial: false) { _ in
        entered.signal()
        _ = release.wait(timeout: .now() + .seconds(signalPatience))
    }
    return (store, blocker, entered, release)
}

