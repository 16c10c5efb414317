import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// After a store subscription's `cancel()` (or its token's deinit) returns, no call of it starts or is still running:
/// cancelled while queued, during its registration, before its first value, inside its own call, by another
/// subscriber of the same round, or while dispatches flow.
@Suite("Cancel means cancel: store subscriptions", .serialized)
struct CancelMeansCancelStoreTests {
    /// A store subscription on `.queue` whose call is running while another state is enqueued: `cancel()` waits for
    /// the running call.
    @Test func cancelWaitsForAQueuedSubscriberCallThatIsRunningWhenAnotherStateIsEnqueued() async {
        for round in 0..<3 {
            let store = makeCounterStore()
            let probe = CancelProbe()
            let token = store.subscribe(\.count, initial: false, on: .queue(DispatchQueue(label: "store.queue"))) {
                _ in probe.call()
            }
            store.dispatch(.increment)
            #expect(await waitOffThePool(for: probe.entered), "round \(round): the queued call never started")
            store.dispatch(.increment)  // enqueues another call while the first runs
            let callEnded = await probe.cancel { token.cancel() }
            #expect(callEnded, "round \(round): cancel() returned while the subscriber was still running")
        }
    }

    /// The store is busy, so the registration is queued and the token is the caller's before `add` runs. The
    /// subscriber's selection (its `select`, or a computed property's getter) holds the state lock inside `add` until
    /// another thread's `cancel()` has set the cancelled flag (its removal then waits for the lock). The first value
    /// that follows must not be delivered: `cancel()` does not wait for a call it cannot see. (On the idle path the
    /// window cannot be reached: nobody has the token before `subscribe` returns.)
    @Test func aSubscriptionCancelledWhileItsQueuedRegistrationRunsIsNeverCalled() async {
        for kind in FVKind.allCases {
            for queued in [false, true] {
                let label = "\(kind), \(queued ? "queued" : "synchronous")"
                let queue = DispatchQueue(label: "firstValue.cancelDuringAdd")
                let (store, blocker, entered, release) = fvBusyStore()
                defer { blocker.cancel() }
                let child = store.scope(state: \.child, action: { (action: FVAction) in action })
                let heard = Recorder<Int>()
                let hookRan = SharedFlag()
                let cancelReturned = SharedFlag()
                let overlapped = SharedFlag()
                let tokenSlot = SharedSlot<SubscriptionToken>()
                let inAdd = DispatchSemaphore(value: 0)
                let hook: @Sendable () -> Void = {
                    guard !hookRan.set() else { return }
                    inAdd.signal()
                    spinWait(timeout: .seconds(signalPatience)) { tokenSlot.value?.isCancelled == true }
                }
                #expect(await fvHold(store, entered: entered), "\(label): the store never got busy")
                let token = await offThePool {
                    fvSubscribe(kind, to: store, child: child, on: queued ? .queue(queue) : .synchronous, hook: hook) {
                        value in
                        heard.append(value)
                        // Never reached with the handshake. Without it, stay until cancel() has returned: it must
                        // not return while a call runs.
                        if spinWait(timeout: .seconds(10), until: { cancelReturned.isSet }) { overlapped.set() }
                    }
                }
                tokenSlot.value = token
                let cancelled = DispatchSemaphore(value: 0)
                Thread {
                    if inAdd.wait(timeout: .now() + .seconds(signalPatience)) == .success {
                        token.cancel()
                        cancelReturned.set()
                    }
                    cancelled.signal()
                }.start()
                release.signal()
                #expect(await waitOffThePool(for: cancelled), "\(label)")
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
                let queue = DispatchQueue(label: "firstValue.cancelBeforeAdd")
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
                    #expect(await waitOffThePool(for: dispatched), "\(label)")
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
                    await fvWaitUntil(seconds: signalPatience) { weakStore == nil && weakChild == nil },
                    "\(label): the stores leaked"
                )
            }
        }
    }

    /// A key-path subscriber and a selection of its own, registered while the store is busy on another thread and
    /// cancelled before their registrations run: never called, and the store ends once let go.
    @Test func aSubscriptionCancelledBeforeItsQueuedRegistrationRunsIsNeverCalledAndLetsTheStoreGo() async {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        weak var weakStore: Store<SGTally, SGToggle>?
        let heard = SGHeard<Int>()
        do {
            // Busy without holding the state lock: a subscriber blocks on the processor (a reducer blocking would
            // hold the lock, and cancel() rightly waits for it).
            let store = Store(initialState: SGTally(), reducer: tallyReducer)
            let blocker = store.subscribe(\.holds, initial: false) { _ in
                entered.signal()
                release.wait()
            }
            defer { blocker.cancel() }
            weakStore = store
            let holder = Thread { store.dispatch(.hold) }
            holder.start()
            #expect(await waitOffThePool(for: entered))
            let keyed = await offThePool { store.subscribe(\.count) { heard.append($0) } }
            let own = await offThePool { store.subscribe(select: { $0.count }, isDuplicate: ==) { heard.append($0) } }
            keyed.cancel()
            own.cancel()
            release.signal()
        }
        #expect(await waitUntil { weakStore == nil })
        #expect(heard.values.isEmpty)
    }

    /// A synchronous store subscription made while the store is busy is registered later, by the store's queued
    /// work, which holds it until then. Letting its token go before that must still stop it, although the token is
    /// not the registration then (the storm of `threadsSubscribingCancellingAndDispatchingAtOnceKeepTheFirstValueRules`
    /// hits the same window).
    @Test func aStoreTokenLetGoBeforeItsQueuedRegistrationRunsHearsNothing() async {
        struct Count: Equatable, Sendable {
            var value = 0
            var holds = 0
        }
        let reducer: @Sendable (inout Count, Bool) -> Void = { state, hold in
            if hold { state.holds += 1 } else { state.value += 1 }
        }
        let (store, blocker, entered, release) = storeWithABlockingSubscriber(
            Count(), reducer: reducer, holds: \.holds
        )
        let busy = onAThreadOfItsOwn { store.dispatch(true) }
        #expect(await waitOffThePool(for: entered))
        let heard = SharedCounter()
        var token: SubscriptionToken? = store.subscribe(\.value) { _ in _ = heard.increment() }
        let weakToken = SharedWeak(token)
        token = nil
        #expect(weakToken.object == nil)
        release.signal()
        #expect(await waitOffThePool(for: busy))
        store.dispatch(false)
        store.dispatch(false)
        let settled = await eventually(timeout: .seconds(signalPatience)) { store.state.value == 2 }
        #expect(settled)
        #expect(heard.value == 0, "a let-go token's listener was called")
        withExtendedLifetime(blocker) {}
    }

    /// A store's synchronous token (its own registration) let go inside its own call, with a weak reference taken;
    /// the store is held only by the dispatching thread and the token. It is never called again, and the store ends
    /// with its subscriptions.
    @Test func aStoreTokenLetGoInsideItsOwnCall() {
        var store: Store<TwoCounters, TwoCountersAction>? = Store(initialState: TwoCounters(), reducer: twoCountersReducer)
        let weakStore = SharedWeak(store)
        let slot = SharedSlot<SubscriptionToken>()
        let calls = SharedCounter()
        slot.set(store!.subscribe(\.a, initial: false) { _ in
            _ = calls.increment()
            slot.letGo()
        })
        let weakToken = SharedWeak(slot.value)
        let other = store!.subscribe(\.a, initial: false) { _ in }
        store!.dispatch(.a)
        #expect(weakToken.object == nil)
        store!.dispatch(.a)
        #expect(calls.value == 1)
        other.cancel()
        store = nil
        #expect(weakStore.object == nil, "the store outlived its subscriptions")
    }

    /// One subscriber lets go of another's token in the same round (the same key-path group and another group): the
    /// other is not called.
    @Test func aStoreTokenLetGoByAnEarlierSubscriberOfTheSameRound() {
        let store = Store(initialState: TwoCounters(), reducer: twoCountersReducer)
        let sameGroup = SharedSlot<SubscriptionToken>()
        let otherGroup = SharedSlot<SubscriptionToken>()
        let heard = SharedCounter()
        let first = store.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, initial: false) { _ in
            sameGroup.letGo()
            otherGroup.letGo()
        }
        sameGroup.set(store.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, initial: false) { _ in
            _ = heard.increment()
        })
        otherGroup.set(store.subscribe(\.a, initial: false) { _ in _ = heard.increment() })
        store.dispatch(.a)
        store.dispatch(.a)
        #expect(heard.value == 0)
        withExtendedLifetime(first) {}
    }

    /// Store tokens let go on one thread while another dispatches: no call after a token's `deinit` returned.
    @Test func storeTokensLetGoWhileDispatchesFlow() async {
        for round in 0..<60 {
            let store = Store(initialState: TwoCounters(), reducer: twoCountersReducer)
            let slots = (0..<12).map { _ in SharedSlot<SubscriptionToken>() }
            let released = (0..<12).map { _ in SharedFlag() }
            let late = SharedCounter()
            var weakRefs: [SharedWeak<SubscriptionToken>] = []
            for index in 0..<12 {
                let flag = released[index]
                let listener: @Sendable (Int) -> Void = { _ in if flag.isSet { _ = late.increment() } }
                slots[index].set(
                    index.isMultiple(of: 2)
                        ? store.subscribe(\.a, initial: false, listener)
                        : store.subscribe(select: { $0.a + $0.b }, isDuplicate: ==, initial: false, listener)
                )
                if index.isMultiple(of: 3) { weakRefs.append(SharedWeak(slots[index].value)) }
            }
            let go = DispatchSemaphore(value: 0)
            let dispatcher = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                for index in 0..<200 { store.dispatch(index.isMultiple(of: 2) ? .a : .b) }
            }
            let releaser = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                for index in 0..<12 {
                    slots[index].letGo()
                    _ = released[index].set()
                }
            }
            go.signal()
            go.signal()
            #expect(await waitOffThePool(for: dispatcher))
            #expect(await waitOffThePool(for: releaser))
            #expect(late.value == 0, "round \(round): \(late.value) calls after their token's deinit returned")
            let allGone = weakRefs.allSatisfy { $0.object == nil }
            #expect(allGone)
        }
    }

    /// A store token let go while its first value is being delivered by the busy store's processor: the release
    /// returns only once that call ended.
    @Test func aStoreTokenLetGoWhileItsQueuedFirstValueRuns() async {
        let (store, blocker, entered, release) = storeWithABlockingSubscriber(
            TwoCounters(), reducer: twoCountersReducer, holds: \.holds
        )
        let busy = onAThreadOfItsOwn { store.dispatch(.hold) }
        #expect(await waitOffThePool(for: entered))
        let probe = CancelProbe()
        let slot = SharedSlot<SubscriptionToken>()
        slot.set(store.subscribe(\.a) { _ in probe.call() })
        release.signal()
        #expect(await waitOffThePool(for: probe.entered))
        let ended = await probe.cancel { slot.letGo() }
        #expect(ended, "letting the token go returned while its first call still ran")
        #expect(await waitOffThePool(for: busy))
        withExtendedLifetime(blocker) {}
    }
}
