import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A reducer, middleware or subscriber may dispatch, subscribe, scope and read: nothing deadlocks or crashes, nested
/// dispatches are queued and run after the current one (FIFO), and a subscriber added from inside hears the state it
/// is registered in, once, then every change.
@Suite("Re-entrancy is allowed: dispatching, subscribing and reading from inside the store's work", .serialized)
struct ReentrancyTests {
    /// Who dispatched an action: a calling thread, the middleware (for the caller's action), or its `.send` effect.
    enum Source: Int, Sendable { case caller, middleware, effect }

    /// An action numbered per thread and source.
    struct Step: Sendable {
        var thread: Int
        var sequence: Int
        var source: Source
    }

    struct Tally: Equatable, Sendable {
        var applied = 0
    }

    /// Threads dispatch numbered actions; each caller's action makes the middleware dispatch one and a `.send`
    /// effect send one. The reducer must never run twice at once nor inside itself; each source's actions from one
    /// thread arrive in order; every action is applied once.
    @Test func concurrentReentrantDispatchStaysExclusiveAndInOrder() async {
        let threads = 4
        let perThread = 400
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let outOfOrder = Atomic<Int>(0)
        let middleware = Middleware<Tally, Step> { store, action, next in
            next(action)
            if action.source == .caller { store.dispatch(Step(thread: action.thread, sequence: action.sequence, source: .middleware)) }
        }
        // Last sequence seen per (thread, source): read and written only inside the reducer, which must be exclusive.
        let order = Locked([Int: Int]())
        let store = Store(initialState: Tally(), reducer: { (state: inout Tally, action: Step) -> Effect<Step> in
            if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
            defer { inside.subtract(1, ordering: .sequentiallyConsistent) }
            let slot = action.thread * 8 + action.source.rawValue
            let isInOrder = order.withLock { seen in
                defer { seen[slot] = action.sequence }
                return (seen[slot] ?? -1) < action.sequence
            }
            if !isInOrder { outOfOrder.add(1, ordering: .relaxed) }
            state.applied += 1
            guard action.source == .caller else { return .none }
            return .send(Step(thread: action.thread, sequence: action.sequence, source: .effect))
        }, middleware: [middleware])
        let token = store.subscribe(\.applied) { _ in }
        await onNewThreads(threads) { thread in
            for sequence in 0..<perThread {
                store.dispatch(Step(thread: thread, sequence: sequence, source: .caller))
            }
        }
        let expected = threads * perThread * 3  // caller, middleware, effect
        #expect(await eventually(timeout: .seconds(60)) { store.state.applied == expected })
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(outOfOrder.load(ordering: .relaxed) == 0)
        withExtendedLifetime(token) {}
    }

    /// A subscriber that dispatches: its action is applied after the current one, and every subscriber sees each
    /// state in order, whether the outer action took the idle path or waited in the queue.
    @Test func subscribersThatDispatchSeeStatesInOrderUnderThreads() async {
        let store = Store(initialState: 0) { (state: inout Int, action: Int) in state += action }
        let seen = Locked([Int]())
        let backwards = Atomic<Int>(0)
        let token = store.subscribe { (value: Int) in
            let wentBack = seen.withLock { values -> Bool in
                defer { values.append(value) }
                return (values.last ?? -1) >= value
            }
            if wentBack { backwards.add(1, ordering: .relaxed) }
            // Re-entrant: every tenth state asks for one more, which lands after this delivery.
            if value % 10 == 0, value > 0 { store.dispatch(1) }
        }
        await onNewThreads(4) { _ in
            for _ in 0..<300 { store.dispatch(1) }
        }
        // The callers may have left the rest to a background thread: wait until the store is idle at the end.
        #expect(await eventually(timeout: .seconds(60)) {
            store.state >= 1_200 && store.inbox.isIdle && seen.withLock { $0.last } == store.state
        })
        #expect(backwards.load(ordering: .relaxed) == 0)
        withExtendedLifetime(token) {}
    }

    /// Subscribers (key path, own selection, scoped) added from inside a listener, then a dispatch: the
    /// registrations are queued before the action, so they hear the current value once, then every change.
    @Test func aSubscriberAddedInsideAListenerHearsTheCurrentValueOnceThenEveryChange() {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let inner = SGHeard<Int>()
        let innerOwn = SGHeard<Int>()
        let innerScoped = SGHeard<Int>()
        let tokens = SGSlot<[SubscriptionToken]>([])
        let child = store.scope(state: \.child, action: { (_: SGToggle) in SGToggle.increment })
        let outer = store.subscribe(\.count) { count in
            guard count == 1 else { return }
            // Subscribe, then dispatch: the registration is queued first, so the first value is 1.
            let a = store.subscribe(\.count) { inner.append($0) }
            let b = store.subscribe(select: { $0.count }, isDuplicate: ==) { innerOwn.append($0) }
            let c = child.subscribe(\.value) { innerScoped.append($0) }
            tokens.set([a, b, c])
            store.dispatch(.increment)
        }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(inner.values == [1, 2, 3])
        #expect(innerOwn.values == [1, 2, 3])
        #expect(innerScoped.values == [1, 2, 3])
        outer.cancel()
        for token in tokens.take() ?? [] { token.cancel() }
    }

    /// A dispatch, then a subscriber, from inside a listener: the action is applied before the registration, whose
    /// first value is the state after it.
    @Test func aSubscriberAddedInsideAListenerAfterAQueuedDispatchStartsFromTheStateItIsRegisteredIn() {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let inner = SGHeard<Int>()
        let tokens = SGSlot<[SubscriptionToken]>([])
        let outer = store.subscribe(\.count) { count in
            guard count == 1 else { return }
            // Dispatch, then subscribe: the action is applied before the registration, which starts from 2.
            store.dispatch(.increment)
            tokens.set([store.subscribe(\.count) { inner.append($0) }])
        }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(inner.values == [2, 3])
        outer.cancel()
        for token in tokens.take() ?? [] { token.cancel() }
    }

    /// A subscriber added from inside the reducer hears the state after that action, once, then every change.
    @Test func aSubscriberAddedInsideTheReducerHearsTheStateAfterThatActionOnce() {
        let storeSlot = SGSlot<Store<SGTally, SGToggle>>()
        let tokens = SGSlot<[SubscriptionToken]>([])
        let inner = SGHeard<Int>()
        let store = Store(initialState: SGTally()) { (state: inout SGTally, action: SGToggle) in
            tallyReducer(&state, action)
            if action == .subscribeNow, let store = storeSlot.value {
                tokens.set([store.subscribe(\.count) { inner.append($0) }])
            }
        }
        storeSlot.set(store)
        store.dispatch(.increment)
        store.dispatch(.subscribeNow)
        store.dispatch(.increment)
        store.dispatch(.noop)
        #expect(inner.values == [2, 3])
        for token in tokens.take() ?? [] { token.cancel() }
        storeSlot.set(nil)
    }

    /// Listeners that cancel themselves or a later subscriber of their group, and dispatch, inside a delivery: a
    /// cancelled subscriber hears nothing after, even later in the same round, and every nested dispatch is applied.
    @Test func listenersCancellingAndDispatchingInsideDeliveryKeepTheRules() {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let selfCancel = SGHeard<Int>()
        let victim = SGHeard<Int>()
        let mine = SGSlot<SubscriptionToken>()
        let victimToken = SGSlot<SubscriptionToken>()
        // The first subscriber cancels itself at 2 and the victim (a later subscriber of the same group) at 3.
        let first = store.subscribe(\.count) { count in
            selfCancel.append(count)
            if count == 2 { mine.take()?.cancel() }
        }
        mine.set(first)
        let killer = store.subscribe(\.count, initial: false) { count in
            if count == 3 { victimToken.take()?.cancel() }
            if count < 5 { store.dispatch(.increment) }
        }
        victimToken.set(store.subscribe(\.count) { victim.append($0) })
        store.dispatch(.increment)
        #expect(store.state.count == 5)
        #expect(selfCancel.values == [0, 1, 2])
        // The victim sits after the killer in the group: it must not hear 3, which the killer cancelled it during.
        #expect(victim.values == [0, 1, 2])
        killer.cancel()
    }

    /// Reading scopes (one and two levels, `ifLet`) from a parent's subscriber, selector and middleware, and from a
    /// scope's own subscriber: no deadlock, no crash, and the value read is at least the one delivered.
    @Test func readingScopesFromSubscribersSelectorsAndMiddlewareDoesNotDeadlock() async throws {
        let scopes = ARBox<(Store<ARMid, ARMidAction>, Store<ARLeaf, ARLeafAction>, Store<ARLeaf, ARLeafAction>)?>(nil)
        let problems = Mutex<[String]>([])
        let middleware = Middleware<ARRoot, ARAction> { context, action, next in
            if case let (child, grand, _)? = scopes.value {
                let before = context.state.total
                if grand.state.count != before || child.state.leaf.count != before {
                    problems.withLock { $0.append("middleware read \(grand.state.count) vs \(before)") }
                }
            }
            next(action)
        }
        let root = arStore(middleware: [middleware])
        root.dispatch(.setOpt(ARMid()))
        let child = root.scope(state: \.mid, action: ARAction.mid)
        let grand = child.scope(state: \.leaf, action: ARMidAction.leaf)
        let opt = try #require(root.scope(ifLet: \.opt, action: ARAction.optMid))
        let optGrand = opt.scope(state: \.leaf, action: ARMidAction.leaf)
        scopes.value = (child, grand, optGrand)
        let finished = await arFinishes {
            var tokens: [SubscriptionToken] = []
            tokens.append(root.subscribe(\.total) { total in
                if grand.state.count < total { problems.withLock { $0.append("root subscriber: grand older") } }
                if optGrand.state.count < total { problems.withLock { $0.append("root subscriber: optGrand older") } }
                _ = child.state
            })
            tokens.append(root.subscribe(select: { state -> Int in
                // Reading a scope of its own store here crashes ("Recursive call to lock Mutex"): the first value is
                // selected under the store's lock (Store.register).
                return state.total
            }, isDuplicate: ==) { _ in })
            tokens.append(grand.subscribe(\.count) { count in
                if root.state.total < count { problems.withLock { $0.append("grand subscriber: root older") } }
                _ = optGrand.state
                _ = child.state
                if count % 10 == 0 { grand.dispatch(.bump) }  // re-entrant dispatch from a scope subscriber
            })
            tokens.append(optGrand.subscribe(\.count) { _ in _ = grand.state; _ = opt.state })
            for _ in 0..<200 { root.dispatch(.bump) }
            withExtendedLifetime(tokens) {}
        }
        #expect(finished, "deadlock")
        #expect(problems.withLock { Array($0.prefix(5)) } == [])
    }

    /// A scope's subscriber may scope, subscribe, dispatch and cancel from inside its call; once every subscriber is
    /// gone, the scope stops following.
    @Test func aScopesSubscriberMayScopeSubscribeDispatchAndCancelFromInsideItsCall() {
        let parent = makeCountedParentStore()
        let child = countedChildScope(of: parent)
        let calls = Recorder<Int>()
        let inner = Recorder<Int>()
        let innerTokens = Locked<[SubscriptionToken]>([])
        let ownToken = Locked<SubscriptionToken?>(nil)
        let token = child.subscribe(\.count, initial: false) { count in
            calls.append(count)
            guard count < 5 else {
                ownToken.withLock { $0 }?.cancel()
                innerTokens.withLock { $0 }.forEach { $0.cancel() }
                return
            }
            let again = countedChildScope(of: parent)
            innerTokens.withLock { $0.append(again.subscribe(\.count, initial: false) { inner.append($0) }) }
            _ = parent.scope(ifLet: \.detail, action: CountedParentAction.detail)?.state
            again.dispatch(.increment)
        }
        ownToken.withLock { $0 = token }
        child.dispatch(.increment)
        #expect(calls.elements == [1, 2, 3, 4, 5])
        // The inner subscribers share the outer one's group and come after it: cancelled by it before it reaches 5.
        #expect(inner.elements == [2, 3, 3, 4, 4, 4])
        parent.dispatch(.child(.increment))
        #expect(calls.elements == [1, 2, 3, 4, 5])
        #expect(child.upstream?.isFollowing == false, "every subscriber is gone: the scope stopped following")
    }
}
