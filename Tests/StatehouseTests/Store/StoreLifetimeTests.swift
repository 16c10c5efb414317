import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A store's tokens, scopes and sequences keep it alive, and let it go once they are cancelled or released, whatever
/// held what: a removed subscriber holding the last references, a store's only token, a queued registration, threads
/// subscribing while others dispatch.
@Suite("Store lifetime: tokens keep their store, and let it go with them", .serialized)
struct StoreLifetimeTests {
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
                let outer = SharedSlot<SubscriptionToken>()
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
                    await fvWaitUntil(seconds: signalPatience) { weakStore == nil && weakChild == nil },
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
                let queue = DispatchQueue(label: "firstValue.releaseInFirst")
                weak var weakStore: Store<FVState, FVAction>?
                weak var weakChild: Store<FVChild, FVAction>?
                let firstCalls = Recorder<Int>()
                let innerHeard = Recorder<Int>()
                let ownToken = SharedSlot<SubscriptionToken>()
                let blockerToken = SharedSlot<SubscriptionToken>()
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
                        _ = release.wait(timeout: .now() + .seconds(signalPatience))
                        blockerToken.value = nil
                    }
                    Thread { [store] in
                        store.dispatch(.hold)
                        holdReturned.signal()
                    }.start()
                    #expect(await waitOffThePool(for: entered), "\(label)")
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
                #expect(await waitOffThePool(for: dispatched), "\(label)")
                #expect(await waitOffThePool(for: holdReturned), "\(label): the processor deadlocked")
                await offThePool { queue.sync {} }
                #expect(
                    await fvWaitUntil(seconds: signalPatience) { weakStore == nil && weakChild == nil },
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

    /// A registration queued from inside a subscriber (the store is busy) holds the store until it runs: once the
    /// tokens are cancelled and let go, the store ends.
    @Test func aStoreDiesOnceItsTokensAreCancelledEvenWithAQueuedRegistration() async {
        var store: Store<Counter, CounterAction>? = makeCounterStore()
        let weakStore = SharedWeak(store)
        let tokens = Locked<[SubscriptionToken]>([])
        // A registration queued from inside a subscriber (the store is busy): it holds the store until it runs.
        let outer = store!.subscribe(\.count) { [weak store] count in
            guard count == 1, let store else { return }
            let token = store.subscribe(\.name) { _ in }
            tokens.withLock { $0.append(token) }
            token.cancel()
        }
        store!.dispatch(.increment)
        outer.cancel()
        #expect(tokens.withLock { $0.count } == 1)
        tokens.withLock { $0.removeAll() }
        store = nil
        #expect(await eventually { weakStore.object == nil }, "the store outlived its cancelled tokens")
    }

    /// Threads subscribing, cancelling and releasing while another dispatches: every store ends once let go.
    @Test func storesDieAfterSubscribersRaceDispatches() async {
        let iterations = 200
        let weakStores = Locked<[SharedWeak<Store<Counter, CounterAction>>]>([])
        for _ in 0..<iterations {
            let store = makeCounterStore()
            weakStores.withLock { $0.append(SharedWeak(store)) }
            let box = Locked<Store<Counter, CounterAction>?>(store)
            await onNewThreads(3) { thread in
                guard let store = box.withLock({ $0 }) else { return }
                switch thread {
                case 0:
                    for _ in 0..<20 { store.dispatch(.increment) }
                default:
                    for _ in 0..<10 {
                        let token = store.subscribe(\.count) { _ in }
                        let other = store.subscribe(select: { $0.count }, isDuplicate: ==) { _ in }
                        token.cancel()
                        _ = other
                    }
                }
            }
            box.withLock { $0 = nil }
        }
        #expect(await eventually { weakStores.withLock { $0.allSatisfy { $0.object == nil } } })
    }

    /// Tokens of every kind of group (key path, row, own selection, scoped) keep their store alive, and let it go
    /// once cancelled or released.
    @Test func tokensKeepTheirStoreAliveAndLetItGoThroughEveryKindOfGroup() async {
        weak var weakStore: Store<SGTally, SGToggle>?
        let heard = SGHeard<Int>()
        var tokens: [SubscriptionToken] = []
        do {
            let store = Store(initialState: SGTally(), reducer: tallyReducer)
            weakStore = store
            tokens.append(store.subscribe(\.count) { heard.append($0) })
            tokens.append(store.subscribe(\.rows[7]) { heard.append($0) })
            tokens.append(store.subscribe(select: { $0.count }, isDuplicate: ==) { heard.append($0) })
            tokens.append(store.scope(state: \.child, action: { (a: SGToggle) in a }).subscribe(\.value) {
                heard.append($0)
            })
        }
        #expect(weakStore != nil)
        weakStore?.dispatch(.increment)
        #expect(heard.values.sorted() == [0, 0, 0, 0, 1, 1, 1])
        tokens.removeFirst().cancel()
        tokens.removeFirst().cancel()
        #expect(weakStore != nil)
        tokens = []  // released, not cancelled
        #expect(await waitUntil { weakStore == nil })
    }

    /// Scopes, `ifLet` scopes, scopes of them, their tokens and a `values` sequence keep the parent; once all are
    /// dropped, it ends.
    @Test func theParentEndsOnceEveryScopeTokenAndSequenceIsDropped() async {
        weak var weakParent: Store<CountedParent, CountedParentAction>?
        do {
            let parent = makeCountedParentStore()
            weakParent = parent
            parent.dispatch(.setDetail(Counter()))
            let grandchild = countedChildScope(of: parent).scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
            guard let detail = parent.scope(ifLet: \.detail, action: CountedParentAction.detail) else {
                Issue.record("no ifLet scope for a detail that is set")
                return
            }
            let detailCount = detail.scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
            let tokens = [grandchild.subscribe(\.self) { _ in }, detailCount.subscribe(\.self) { _ in }]
            var iterator = detail.values(\.count).makeAsyncIterator()
            #expect(await iterator.next() == 0)
            parent.dispatch(.child(.increment))
            parent.dispatch(.setDetail(nil))
            withExtendedLifetime(tokens) {}
        }
        #expect(await eventually { weakParent == nil })
    }
}
