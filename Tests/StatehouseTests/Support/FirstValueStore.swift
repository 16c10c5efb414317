import Dispatch
import Foundation
import StatehouseTestSupport
import Synchronization
@testable import Statehouse

// A store, its scope, and every kind of subscriber, for the tests of a subscription's first value, of cancelling
// between a registration and that value, and of letting go of what a removed subscription held.

enum FVAction: Equatable, Sendable { case increment, hold }

struct FVChild: Equatable, Sendable {
    var value = 0
    /// Computed: a key-path subscriber's group runs the getter, with the child store's state locked, when it selects.
    var hooked: Int {
        fvTakeKeyPathHook()?()
        return value
    }
}

struct FVState: Equatable, Sendable {
    var count = 0
    var holds = 0
    var child = FVChild()
    /// Computed: a key-path subscriber's group runs the getter, with the store's state locked, when it selects —
    /// the tests' way into the window between a registration and its first value.
    var hooked: Int {
        fvTakeKeyPathHook()?()
        return count
    }
}

func fvReducer(_ state: inout FVState, _ action: FVAction) {
    switch action {
    case .increment:
        state.count += 1
        state.child.value = state.count
    case .hold:
        state.holds += 1
    }
}

/// What the next read of a `hooked` property runs, once.
let fvKeyPathHook = Locked<(@Sendable () -> Void)?>(nil)

func fvTakeKeyPathHook() -> (@Sendable () -> Void)? {
    fvKeyPathHook.withLock { hook in
        defer { hook = nil }
        return hook
    }
}

/// Which kind of subscriber: a key-path group shared by subscribers, a selection of its own, and the same two on a
/// scoped store (registered on the parent's processor, through `registerInScope`).
enum FVKind: CaseIterable, CustomStringConvertible {
    case keyPath, ownSelection, scopedKeyPath, scopedSelection

    var isScoped: Bool { self == .scopedKeyPath || self == .scopedSelection }

    var description: String {
        switch self {
        case .keyPath: "key path"
        case .ownSelection: "own selection"
        case .scopedKeyPath: "scoped key path"
        case .scopedSelection: "scoped selection"
        }
    }
}

/// Subscribes a listener of the count (the child's value for a scoped kind). `hook`, if given, runs when the
/// subscriber's group selects, with the state locked: first inside `add`.
func fvSubscribe(
    _ kind: FVKind,
    to store: Store<FVState, FVAction>,
    child: Store<FVChild, FVAction>,
    initial: Bool = true,
    on delivery: Delivery = .synchronous,
    hook: (@Sendable () -> Void)? = nil,
    _ listener: @escaping @Sendable (Int) -> Void
) -> SubscriptionToken {
    switch kind {
    case .keyPath:
        guard let hook else { return store.subscribe(\.count, initial: initial, on: delivery, listener) }
        fvKeyPathHook.withLock { $0 = hook }
        return store.subscribe(\.hooked, initial: initial, on: delivery, listener)
    case .ownSelection:
        return store.subscribe(
            select: { state in
                hook?()
                return state.count
            },
            isDuplicate: ==, initial: initial, on: delivery, listener
        )
    case .scopedKeyPath:
        guard let hook else { return child.subscribe(\.value, initial: initial, on: delivery, listener) }
        fvKeyPathHook.withLock { $0 = hook }
        return child.subscribe(\.hooked, initial: initial, on: delivery, listener)
    case .scopedSelection:
        return child.subscribe(
            select: { state in
                hook?()
                return state.value
            },
            isDuplicate: ==, initial: initial, on: delivery, listener
        )
    }
}

/// A store that a `.hold` keeps busy without its state lock held (see `storeWithABlockingSubscriber`).
func fvBusyStore() -> (
    store: Store<FVState, FVAction>, blocker: SubscriptionToken, entered: DispatchSemaphore, release: DispatchSemaphore
) {
    storeWithABlockingSubscriber(FVState(), reducer: fvReducer, holds: \.holds)
}

/// Makes `store` busy on a thread of its own (see ``fvBusyStore()``); `false` if it did not get busy in time.
func fvHold(_ store: Store<FVState, FVAction>, entered: DispatchSemaphore) async -> Bool {
    Thread { store.dispatch(.hold) }.start()
    return await waitOffThePool(for: entered)
}

/// Waits until everything `store` had queued has run: a subscriber added now hears its first value only then.
func fvDrain(_ store: Store<FVState, FVAction>, queues: [DispatchQueue] = []) async -> Bool {
    let heard = SharedCounter()
    let probe = await offThePool { store.subscribe(\.holds) { _ in heard.increment() } }
    defer { probe.cancel() }
    guard await fvWaitUntil(seconds: 120, { heard.value >= 1 }) else { return false }
    for queue in queues { await offThePool { queue.sync {} } }
    return true
}

func fvWaitUntil(seconds: Int = 120, _ condition: () -> Bool) async -> Bool {
    await eventually(timeout: .seconds(seconds), every: .milliseconds(2), condition)
}

/// Runs `body` on a thread of its own; whether it returned within `seconds` (a deadlock detector).
func fvFinishes(within seconds: Int = signalPatience, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return await waitOffThePool(for: done, seconds: seconds)
}

/// The store's bookkeeping against its groups: subscribers counted and registered, empty key-path groups counted and
/// present.
func fvBookkeeping<S: Sendable, A: Sendable>(
    _ store: Store<S, A>
) -> (subscribers: Int, registered: Int, emptyKeyed: Int, presentEmptyKeyed: Int) {
    store.core.withLock { core in
        var registered = 0
        var presentEmptyKeyed = 0
        for case let group? in core.groups {
            registered += group.subscribers.count
            if group.key != nil, group.subscribers.isEmpty { presentEmptyKeyed += 1 }
        }
        return (core.subscriberCount, registered, core.emptyKeyedGroups, presentEmptyKeyed)
    }
}

