import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

// Attacks on a6b26f0, which made a store's subscribe + unsubscribe cheaper: the first value is a
// `StoreState.FirstValue` delivered through the subscriber's own subscription; `add` borrows its group; the removal
// is unwrapped with `guard let`; `detach` borrows the store from the subscription's own reference.
//
// The windows it opened: a subscription cancelled between its registration (`add`, under the state lock) and its
// first value; a removal let go while a lock is held; a store or a scoped store whose last reference goes in
// `detach`; a scoped store's registration that comes back empty; many threads doing all of it at once.

// MARK: - Helpers

private enum FVAction: Equatable, Sendable { case increment, hold }

private struct FVChild: Equatable, Sendable {
    var value = 0
    /// Computed: a key-path subscriber's group runs the getter, with the child store's state locked, when it selects.
    var hooked: Int {
        fvTakeKeyPathHook()?()
        return value
    }
}

private struct FVState: Equatable, Sendable {
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

private func fvReducer(_ state: inout FVState, _ action: FVAction) {
    switch action {
    case .increment:
        state.count += 1
        state.child.value = state.count
    case .hold:
        state.holds += 1
    }
}

/// What the next read of a `hooked` property runs, once.
private let fvKeyPathHook = Locked<(@Sendable () -> Void)?>(nil)

private func fvTakeKeyPathHook() -> (@Sendable () -> Void)? {
    fvKeyPathHook.withLock { hook in
        defer { hook = nil }
        return hook
    }
}

/// Which kind of subscriber: a key-path group shared by subscribers, a selection of its own, and the same two on a
/// scoped store (registered on the parent's processor, through `registerInScope`).
private enum FVKind: CaseIterable, CustomStringConvertible {
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
private func fvSubscribe(
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

/// A store that a `.hold` keeps busy without its state lock held (see `attackStoreWithABlockingSubscriber`).
private func fvBusyStore() -> (
    store: Store<FVState, FVAction>, blocker: SubscriptionToken, entered: DispatchSemaphore, release: DispatchSemaphore
) {
    attackStoreWithABlockingSubscriber(FVState(), reducer: fvReducer, holds: \.holds)
}

/// Makes `store` busy on a thread of its own (see ``fvBusyStore()``); `false` if it did not get busy in time.
private func fvHold(_ store: Store<FVState, FVAction>, entered: DispatchSemaphore) async -> Bool {
    Thread { store.dispatch(.hold) }.start()
    return await attackWait(for: entered)
}

/// Waits until everything `store` had queued has run: a subscriber added now hears its first value only then.
private func fvDrain(_ store: Store<FVState, FVAction>, queues: [DispatchQueue] = []) async -> Bool {
    let heard = AttackCounter()
    let probe = await offThePool { store.subscribe(\.holds) { _ in heard.increment() } }
    defer { probe.cancel() }
    guard await fvWaitUntil(seconds: 120, { heard.value >= 1 }) else { return false }
    for queue in queues { await offThePool { queue.sync {} } }
    return true
}

private func fvWaitUntil(seconds: Int = 120, _ condition: () -> Bool) async -> Bool {
    await eventually(timeout: .seconds(seconds), every: .milliseconds(2), condition)
}

/// Runs `body` on a thread of its own; whether it returned within `seconds` (a deadlock detector).
private func fvFinishes(within seconds: Int = attackPatience, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return await attackWait(for: done, seconds: seconds)
}

/// The store's bookkeeping against its groups: subscribers counted and registered, empty key-path groups counted and
/// present.
private func fvBookkeeping<S: Sendable, A: Sendable>(
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

/// What one subscriber heard, and whether a call started after its cancellation returned.
private final class FVRecord: Sendable {
    let kind: FVKind
    let initial: Bool
    /// The count read before subscribing: the first value can be no older.
    let before: Int
    private let heard = Locked<[Int]>([])
    private let cancelReturned = Atomic<Bool>(false)
    private let lateCalls = Atomic<Int>(0)

    init(kind: FVKind, initial: Bool, before: Int) {
        self.kind = kind
        self.initial = initial
        self.before = before
    }

    func call(_ value: Int) {
        if cancelReturned.load(ordering: .sequentiallyConsistent) {
            lateCalls.add(1, ordering: .sequentiallyConsistent)
        }
        heard.withLock { $0.append(value) }
    }

    /// Called once `cancel()` (or the token's release) has returned.
    func cancelled() {
        cancelReturned.store(true, ordering: .sequentiallyConsistent)
    }

    var values: [Int] { heard.withLock { $0 } }
    var late: Int { lateCalls.load(ordering: .sequentiallyConsistent) }

    /// What breaks the rules: a value older than the state before subscribing, a repeat or a step back, a call
    /// after cancel() returned.
    var violations: [String] {
        let values = values
        var found: [String] = []
        if let first = values.first, initial ? first < before : first <= before {
            found.append("\(kind) initial: \(initial): first value \(first), the count was \(before) before")
        }
        if zip(values, values.dropFirst()).contains(where: { $0 >= $1 }) {
            found.append("\(kind) initial: \(initial): not strictly increasing: \(values.prefix(12))…")
        }
        if late > 0 { found.append("\(kind): \(late) call(s) started after cancel() returned") }
        return found
    }
}

// MARK: - Suite

@Suite(.serialized)
struct AttackFirstValueTests {
    // MARK: Cancelled between registration and first value

    /// The store is busy, so the registration is queued and the token is the caller's before `add` runs. The
    /// subscriber's selection (its `select`, or a computed property's getter) holds the state lock inside `add` until
    /// another thread's `cancel()` has set the cancelled flag (its removal then waits for the lock). The first value
    /// that follows must not be delivered: `cancel()` does not wait for a call it cannot see. (On the idle path the
    /// window cannot be reached: nobody has the token before `subscribe` returns.)
    @Test func aSubscriptionCancelledWhileItsQueuedRegistrationRunsIsNeverCalled() async {
        for kind in FVKind.allCases {
            for queued in [false, true] {
                let label = "\(kind), \(queued ? "queued" : "synchronous")"
                let queue = DispatchQueue(label: "attack.firstValue.cancelDuringAdd")
                let (store, blocker, entered, release) = fvBusyStore()
                defer { blocker.cancel() }
                let child = store.scope(state: \.child, action: { (action: FVAction) in action })
                let heard = Recorder<Int>()
                let hookRan = AttackFlag()
                let cancelReturned = AttackFlag()
                let overlapped = AttackFlag()
                let tokenSlot = AttackSlot<SubscriptionToken>()
                let inAdd = DispatchSemaphore(value: 0)
                let hook: @Sendable () -> Void = {
                    guard !hookRan.set() else { return }
                    inAdd.signal()
                    attackSpin(timeout: .seconds(attackPatience)) { tokenSlot.value?.isCancelled == true }
                }
                #expect(await fvHold(store, entered: entered), "\(label): the store never got busy")
                let token = await offThePool {
                    fvSubscribe(kind, to: store, child: child, on: queued ? .queue(queue) : .synchronous, hook: hook) {
                        value in
                        heard.append(value)
                        // Never reached with the handshake. Without it, stay until cancel() has returned: it must
                        // not return while a call runs.
                        if attackSpin(timeout: .seconds(10), until: { cancelReturned.isSet }) { overlapped.set() }
                    }
                }
                tokenSlot.value = token
                let cancelled = DispatchSemaphore(value: 0)
                Thread {
                    if inAdd.wait(timeout: .now() + .seconds(attackPatience)) == .success {
                        token.cancel()
                        cancelReturned.set()
                    }
                    cancelled.signal()
                }.start()
                release.signal()
                #expect(await attackWait(for: cancelled), "\(label)")
                #expect(await fvDrain(store, queues: [queue]), "\(label): the store never finished its queue")
                #expect(hookRan.isSet, "\(label): the registration never selected")
                #expect(cancelReturned.isSet, "\(label)")
                #expect(heard.elements.isEmpty, "\(label): cancelled during its registration, it was called")
                #expect(!overlapped.isSet, "\(label): cancel() returned while the first value's call was running")
                let books = fvBookkeeping(store)
                #expect(books.subscribers == 1 && books.registered == 1, "\(label): \(books)")
                if kind.isScoped {
                    // Stopped inside the removal, which cancel() made before it returned.
                    #expect(child.upstream?.isFollowing == false, "\(label): the scope follows with no subscriber")
                    let childBooks = fvBookkeeping(child)
                    #expect(childBooks.subscribers == 0 && childBooks.registered == 0, "\(label): \(childBooks)")
                }
            }
        }
    }

    /// Cancelled, or released, before the queued registration runs: `add` finds it cancelled and returns nothing, and
    /// a scoped store that started following for it stops again.
    @Test func subscriptionsCancelledBeforeTheirQueuedRegistrationRunLeaveNothingBehind() async {
        for kind in FVKind.allCases {
            for queued in [false, true] {
                let label = "\(kind), \(queued ? "queued" : "synchronous")"
                let queue = DispatchQueue(label: "attack.firstValue.cancelBeforeAdd")
                let heard = Recorder<Int>()
                weak var weakStore: Store<FVState, FVAction>?
                weak var weakChild: Store<FVChild, FVAction>?
                do {
                    let (store, blocker, entered, release) = fvBusyStore()
                    let child = store.scope(state: \.child, action: { (action: FVAction) in action })
                    weakStore = store
                    weakChild = child
                    #expect(await fvHold(store, entered: entered), "\(label)")
                    let delivery: Delivery = queued ? .queue(queue) : .synchronous
                    await offThePool {
                        fvSubscribe(kind, to: store, child: child, on: delivery) { heard.append($0) }.cancel()
                        // Released without cancel(): the token's deinit cancels.
                        _ = fvSubscribe(kind, to: store, child: child, initial: false, on: delivery) {
                            heard.append($0)
                        }
                    }
                    let dispatched = dispatchBehindTheBusyStore(.increment, to: store)
                    release.signal()
                    #expect(await attackWait(for: dispatched), "\(label)")
                    #expect(await fvDrain(store, queues: [queue]), "\(label)")
                    #expect(store.state.count == 1)
                    #expect(heard.elements.isEmpty, "\(label): a cancelled subscription was called")
                    let books = fvBookkeeping(store)
                    #expect(books.subscribers == 1 && books.registered == 1, "\(label): \(books)")
                    let childBooks = fvBookkeeping(child)
                    #expect(childBooks.subscribers == 0 && childBooks.registered == 0, "\(label): \(childBooks)")
                    // Stopped by the registration that found the subscription cancelled, before the drain's.
                    #expect(child.upstream?.isFollowing == false,
                            "\(label): the scope follows for a registration that never happened")
                    #expect(store.followers.isEmpty, "\(label)")
                    blocker.cancel()
                }
                #expect(
                    await fvWaitUntil(seconds: attackPatience) { weakStore == nil && weakChild == nil },
                    "\(label): the stores leaked"
                )
            }
        }
    }

    // MARK: First value: current, first, once

    /// A key-path group that emptied stays, unrefreshed, for the next subscriber of that key path; the next one, on
    /// the idle path and on the busy one, starts from the current value, hears it once, then every change.
    @Test func aKeyPathGroupThatEmptiedGivesTheNextSubscriberTheCurrentValueOnce() async {
        let (store, blocker, entered, release) = fvBusyStore()
        defer { blocker.cancel() }
        let child = store.scope(state: \.child, action: { (action: FVAction) in action })
        store.subscribe(\.count) { _ in }.cancel()
        child.subscribe(\.value) { _ in }.cancel()
        // Keep the scope following, so that its emptied group is the one reused.
        let keepChild = child.subscribe(select: { $0.value }, isDuplicate: { _, _ in true }) { _ in }
        defer { keepChild.cancel() }
        store.dispatch(.increment)
        store.dispatch(.increment)
        let idle = Recorder<Int>()
        let idleChild = Recorder<Int>()
        let idleToken = store.subscribe(\.count) { idle.append($0) }
        let idleChildToken = child.subscribe(\.value) { idleChild.append($0) }
        #expect(idle.elements == [2])
        #expect(idleChild.elements == [2])
        idleToken.cancel()
        idleChildToken.cancel()
        store.dispatch(.increment)
        // Busy: an action queued before the registration is in its first value; one queued after comes after it.
        #expect(await fvHold(store, entered: entered))
        let busy = Recorder<Int>()
        let busyChild = Recorder<Int>()
        let late = Recorder<Int>()
        // Each dispatch waits for its action, so it is made on a thread of its own; the registrations only queue.
        let before = dispatchBehindTheBusyStore(.increment, to: store)
        let tokens = await offThePool { () -> [SubscriptionToken] in
            let a = store.subscribe(\.count) { busy.append($0) }
            let b = child.subscribe(\.value) { busyChild.append($0) }
            let c = store.subscribe(\.count, initial: false) { late.append($0) }
            return [a, b, c]
        }
        let after = dispatchBehindTheBusyStore(.increment, to: store)
        release.signal()
        #expect(await attackWait(for: before))
        #expect(await attackWait(for: after))
        #expect(await fvDrain(store))
        #expect(busy.elements == [4, 5])
        #expect(busyChild.elements == [4, 5])
        #expect(late.elements == [5], "initial: false: no first value")
        for token in tokens { token.cancel() }
        let books = fvBookkeeping(store)
        #expect(books.emptyKeyed == books.presentEmptyKeyed, "\(books)")
    }

    /// Threads subscribing (every kind, synchronous and queued, with and without a first value), cancelling at once
    /// or by release, or keeping, while others dispatch. Every subscriber hears no value older than the state before
    /// it subscribed, each value once and in order, the last one if it kept its token, and nothing once cancel()
    /// returned; the bookkeeping adds up, and the scope stops following when its subscribers are gone.
    @Test func threadsSubscribingCancellingAndDispatchingAtOnceKeepTheFirstValueRules() async {
        let store = Store(initialState: FVState(), reducer: fvReducer)
        let child = store.scope(state: \.child, action: { (action: FVAction) in action })
        let dispatchers = 2
        let perDispatcher = 1_500
        let total = dispatchers * perDispatcher
        let subscribers = 3
        let rounds = 160
        let queues = (0..<subscribers).map { DispatchQueue(label: "attack.firstValue.storm.\($0)") }
        let records = Recorder<FVRecord>()
        let kept = Recorder<(FVRecord, SubscriptionToken)>()
        await onNewThreads(dispatchers + subscribers) { thread in
            guard thread >= dispatchers else {
                for _ in 0..<perDispatcher { store.dispatch(.increment) }
                return
            }
            let index = thread - dispatchers
            for round in 0..<rounds {
                let kind = FVKind.allCases[round % 4]
                let queued = (round / 4) % 2 == 1
                let keep = round % 3 == 1
                let initial = keep || round % 5 != 0
                let record = FVRecord(kind: kind, initial: initial, before: store.state.count)
                records.append(record)
                var token: SubscriptionToken? = fvSubscribe(
                    kind, to: store, child: child, initial: initial,
                    on: queued ? .queue(queues[index]) : .synchronous
                ) { record.call($0) }
                switch round % 3 {
                case 0:
                    token?.cancel()
                    record.cancelled()
                case 1:
                    if let token { kept.append((record, token)) }
                default:
                    token = nil
                    record.cancelled()
                }
                withExtendedLifetime(token) {}
            }
        }
        // A dispatch on a busy store may return before its action is applied: the processor catches up.
        #expect(await fvWaitUntil { store.state.count == total })
        let everyKeptHeardTheLast = await fvWaitUntil {
            kept.elements.allSatisfy { $0.0.values.last == total }
        }
        #expect(everyKeptHeardTheLast)
        #expect(await fvDrain(store, queues: queues))
        let violations = records.elements.flatMap(\.violations)
        #expect(violations.isEmpty, "\(violations.count) violations: \(violations.prefix(10))")
        let keptParent = kept.elements.filter { !$0.0.kind.isScoped }.count
        let keptChild = kept.elements.count - keptParent
        var books = fvBookkeeping(store)
        #expect(books.subscribers == keptParent && books.registered == keptParent, "\(books)")
        #expect(books.emptyKeyed == books.presentEmptyKeyed, "\(books)")
        var childBooks = fvBookkeeping(child)
        #expect(childBooks.subscribers == keptChild && childBooks.registered == keptChild, "\(childBooks)")
        #expect(childBooks.emptyKeyed == childBooks.presentEmptyKeyed, "\(childBooks)")
        for (_, token) in kept.elements { token.cancel() }
        books = fvBookkeeping(store)
        childBooks = fvBookkeeping(child)
        #expect(books.subscribers == 0 && books.registered == 0, "\(books)")
        #expect(childBooks.subscribers == 0 && childBooks.registered == 0, "\(childBooks)")
        #expect(child.upstream?.isFollowing == false, "no subscriber left: the scope stopped following")
        #expect(store.followers.isEmpty)
    }

    // MARK: Letting go of what was removed

    /// The removed listener (or own selection) holds the last reference to another token of the same store, to a
    /// scoped store and its token, and to the store itself, which only tokens hold: cancelling it, or releasing its
    /// token, lets all of them go after the store's lock is released, and the store ends inside `detach`.
    @Test func removingASubscriberThatHoldsTheLastReferencesToTokensAScopeAndTheStoreLetsThemGo() async {
        for kind in FVKind.allCases {
            for byRelease in [false, true] {
                let label = "\(kind), \(byRelease ? "released" : "cancelled")"
                weak var weakStore: Store<FVState, FVAction>?
                weak var weakChild: Store<FVChild, FVAction>?
                let innerHeard = Recorder<Int>()
                let outer = AttackSlot<SubscriptionToken>()
                do {
                    let store = Store(initialState: FVState(), reducer: fvReducer)
                    let child = store.scope(state: \.child, action: { (action: FVAction) in action })
                    weakStore = store
                    weakChild = child
                    let inner = store.subscribe(\.count) { innerHeard.append($0) }
                    let innerOwn = store.subscribe(select: { $0.holds }, isDuplicate: ==) { _ in }
                    let innerChild = child.subscribe(\.value) { innerHeard.append($0) }
                    let held = [inner, innerOwn, innerChild]
                    // The closures of the outer subscriber own everything.
                    let token: SubscriptionToken
                    switch kind {
                    case .keyPath:
                        token = store.subscribe(\.count) { _ in withExtendedLifetime((held, store, child)) {} }
                    case .ownSelection:
                        token = store.subscribe(
                            select: { state in withExtendedLifetime((held, store, child)) { state.count } },
                            isDuplicate: ==
                        ) { _ in }
                    case .scopedKeyPath:
                        token = child.subscribe(\.value) { _ in withExtendedLifetime((held, store, child)) {} }
                    case .scopedSelection:
                        token = child.subscribe(
                            select: { state in withExtendedLifetime((held, store, child)) { state.value } },
                            isDuplicate: ==
                        ) { _ in }
                    }
                    outer.value = token
                    store.dispatch(.increment)
                }
                #expect(weakStore != nil, "\(label): the tokens keep the store")
                let finished = await fvFinishes {
                    if byRelease {
                        outer.value = nil
                    } else {
                        outer.value?.cancel()
                        outer.value = nil
                    }
                }
                #expect(finished, "\(label): letting go of the removal deadlocked")
                #expect(
                    await fvWaitUntil(seconds: attackPatience) { weakStore == nil && weakChild == nil },
                    "\(label): a store leaked"
                )
                #expect(innerHeard.elements == [0, 0, 1, 1], "\(label): \(innerHeard.elements)")
            }
        }
    }

    /// A store, or a scoped store, that only its one token holds: cancelling or releasing the token ends it inside
    /// `detach`, once the removal is done (the subscription's own reference, which `detach` borrows the store from,
    /// is let go last).
    @Test func theOnlyTokenOfAStoreOrOfAScopeEndsItOnceItsRemovalIsDone() async {
        let leaks = Recorder<Int>()
        let finished = await fvFinishes {
            for round in 0..<2_000 {
                weak var weakStore: Store<FVState, FVAction>?
                weak var weakChild: Store<FVChild, FVAction>?
                var token: SubscriptionToken?
                do {
                    let store = Store(initialState: FVState(), reducer: fvReducer)
                    let child = store.scope(state: \.child, action: { (action: FVAction) in action })
                    weakStore = store
                    weakChild = child
                    token = fvSubscribe(FVKind.allCases[round % 4], to: store, child: child) { _ in }
                    if round % 3 == 0 { store.dispatch(.increment) }
                }
                if round % 8 < 4 { token?.cancel() }
                token = nil
                if weakStore != nil || weakChild != nil { leaks.append(round) }
            }
        }
        #expect(finished, "ending a store inside detach deadlocked")
        #expect(leaks.elements.isEmpty, "stores outlived their only token: rounds \(leaks.elements.prefix(10))")
    }

    /// The first value (busy path: the token exists by then) releases the subscriber's own token, and its closure
    /// holds the last references to other tokens of the store and of a scope, and to both stores: the call cancels
    /// itself, the scope stops following from inside it, and everything goes once the first value is done.
    @Test func aFirstValueCallThatReleasesItsOwnTokenAndHoldsTheLastReferencesLetsEverythingGo() async {
        for kind in FVKind.allCases {
            for queued in [false, true] {
                let label = "\(kind), \(queued ? "queued" : "synchronous")"
                let queue = DispatchQueue(label: "attack.firstValue.releaseInFirst")
                weak var weakStore: Store<FVState, FVAction>?
                weak var weakChild: Store<FVChild, FVAction>?
                let firstCalls = Recorder<Int>()
                let innerHeard = Recorder<Int>()
                let ownToken = AttackSlot<SubscriptionToken>()
                let blockerToken = AttackSlot<SubscriptionToken>()
                let entered = DispatchSemaphore(value: 0)
                let release = DispatchSemaphore(value: 0)
                let holdReturned = DispatchSemaphore(value: 0)
                var dispatched = DispatchSemaphore(value: 0)
                do {
                    let store = Store(initialState: FVState(), reducer: fvReducer)
                    let child = store.scope(state: \.child, action: { (action: FVAction) in action })
                    weakStore = store
                    weakChild = child
                    // Busy on another thread; the blocker lets its own token go when it is released.
                    blockerToken.value = store.subscribe(\.holds, initial: false) { _ in
                        entered.signal()
                        _ = release.wait(timeout: .now() + .seconds(attackPatience))
                        blockerToken.value = nil
                    }
                    Thread { [store] in
                        store.dispatch(.hold)
                        holdReturned.signal()
                    }.start()
                    #expect(await attackWait(for: entered), "\(label)")
                    // Called on this task, not on a thread of their own (`offThePool`): the store is busy, so they
                    // only queue, and a thread's closure, let go whenever the thread ends, would hold the tokens too.
                    // (The dispatch waits for its action, so it is made on a thread of its own.)
                    let held = [
                        store.subscribe(\.count) { innerHeard.append($0) },
                        child.subscribe(\.value) { innerHeard.append($0) },
                    ]
                    let listener: @Sendable (Int) -> Void = { value in
                        withExtendedLifetime((held, store, child)) {}
                        firstCalls.append(value)
                        ownToken.value = nil
                    }
                    let delivery: Delivery = queued ? .queue(queue) : .synchronous
                    ownToken.value = fvSubscribe(kind, to: store, child: child, on: delivery, listener)
                    // Waits for its action: on a thread of its own, which lets the store go when it ends.
                    dispatched = dispatchBehindTheBusyStore(.increment, to: store)
                }
                release.signal()
                #expect(await attackWait(for: dispatched), "\(label)")
                #expect(await attackWait(for: holdReturned), "\(label): the processor deadlocked")
                await offThePool { queue.sync {} }
                #expect(
                    await fvWaitUntil(seconds: attackPatience) { weakStore == nil && weakChild == nil },
                    "\(label): a store leaked"
                )
                #expect(firstCalls.elements == [0], "\(label): \(firstCalls.elements)")
                // Synchronous: the tokens went with the first value's closure, before the increment. Queued: the
                // closure lives until the queue has run the call, which may be after the increment.
                let inner = innerHeard.elements
                let innerAsExpected = queued
                    ? inner.starts(with: [0, 0]) && inner.dropFirst(2).allSatisfy { $0 == 1 }
                    : inner == [0, 0]
                #expect(innerAsExpected, "\(label): \(inner)")
            }
        }
    }
}
