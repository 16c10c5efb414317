// Attacks 5b18557 ("A container's synchronous token is its registration"), by a fresh-context reviewer: the windows
// where a table entry's `unowned(safe)` reference outlives its token's `deinit`, the container's and the store's ends,
// `OwningToken`s, `values` streams and combined tokens.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport


private struct Pair: Equatable, Sendable {
    var a = 0
    var b = 0
    var holds = 0
}

private enum PairAction: Sendable { case a, b, hold }

private func pairReducer(_ state: inout Pair, _ action: PairAction) {
    switch action {
    case .a: state.a += 1
    case .b: state.b += 1
    case .hold: state.holds += 1
    }
}

private final class Watcher: StoreSubscribing, Sendable {
    let heard: AttackCounter
    init(_ heard: AttackCounter) { self.heard = heard }
}

@Suite(.serialized) struct AttackMergeReviewTests {
    // MARK: Combined tokens

    /// DESIGN / StateContainers.md: "When a container is deallocated, its async sequences finish and its tokens
    /// report isCancelled." A combined token (what `recordChanges(to:on: .queue)` returns) keeps its own flag, and
    /// nobody sets it when the container ends: it reports a live subscription whose parts are all cancelled.
    @Test func aCombinedTokenOfADeallocatedContainerReportsCancelled() {
        let queue = DispatchQueue(label: "attack.merge.combined")
        var container: StateContainer<Int>? = StateContainer(0, key: "attack.merge.combined.\(UUID().uuidString)")
        let parts = [container!.observe { _ in }, container!.observe(on: .queue(queue)) { _ in }]
        let combined = SubscriptionToken.combining(parts)
        container = nil
        let partsCancelled = parts.allSatisfy { $0.isCancelled }
        #expect(partsCancelled, "the parts know their container ended")
        #expect(combined.isCancelled, "the combined token of a deallocated container says it is live")
    }

    /// A combined token let go from inside one of its parts' calls: its `deinit` cancels the part it is called from
    /// (no wait) and the other; the round then walks past the parts' entries.
    @Test func aCombinedTokenLetGoInsideAPartsCall() {
        let c = StateContainer(0, key: "attack.merge.combinedInside.\(UUID().uuidString)")
        let slot = AttackSlot<SubscriptionToken>()
        let heard = AttackCounter()
        let first = c.observe { value in
            _ = heard.increment()
            if value == 1 { slot.letGo() }
        }
        let second = c.observe { _ in _ = heard.increment() }
        slot.set(SubscriptionToken.combining([first, second]))
        let weakFirst = AttackWeak(first)
        _ = consume first
        _ = consume second
        c.modify(1)
        #expect(heard.value == 1, "the second part was called after the combined token's deinit in the same round")
        c.modify(2)
        #expect(heard.value == 1)
        #expect(weakFirst.object == nil)
    }

    // MARK: Container tokens

    /// A token with a `weak` reference taken (its counts move to a side table) let go on another thread while a
    /// round, held inside an earlier listener, has its entry still ahead: many rounds, the walk released right after.
    @Test func weaklyReferencedTokensLetGoWhileARoundWalksTowardsThem() async {
        for round in 0..<100 {
            let c = StateContainer(0, key: "attack.merge.weakWalk.\(round).\(UUID().uuidString)")
            let (first, entered, release) = attackListenerHeldAtOne(c)
            let letGo = AttackFlag()
            let heardAfter = AttackCounter()
            let slots = (0..<4).map { _ in AttackSlot<SubscriptionToken>() }
            var weakRefs: [AttackWeak<SubscriptionToken>] = []
            for slot in slots {
                slot.set(c.observe { _ in if letGo.isSet { _ = heardAfter.increment() } })
                weakRefs.append(AttackWeak(slot.value))
            }
            let delivered = onAThreadOfItsOwn { c.modify(1) }
            #expect(await attackWait(for: entered))
            let gone = onAThreadOfItsOwn {
                for slot in slots { slot.letGo() }
                _ = letGo.set()
            }
            #expect(await attackWait(for: gone))
            release.signal()
            #expect(await attackWait(for: delivered))
            c.modify(2)
            let allGone = weakRefs.allSatisfy { $0.object == nil }
            #expect(allGone)
            #expect(heardAfter.value == 0, "round \(round): a listener ran after its token's deinit returned")
            withExtendedLifetime(first) {}
        }
    }

    /// The same without holding the round: a thread changes the container while another lets tokens go (some with
    /// weak references). A call that starts after a token's `deinit` returned, or is still running then, sees the
    /// flag set after the release.
    @Test func tokensLetGoWhileChangesFlow() async {
        for round in 0..<60 {
            let c = StateContainer(0, key: "attack.merge.flow.\(round).\(UUID().uuidString)")
            let slots = (0..<16).map { _ in AttackSlot<SubscriptionToken>() }
            let released = (0..<16).map { _ in AttackFlag() }
            let late = AttackCounter()
            var weakRefs: [AttackWeak<SubscriptionToken>] = []
            for index in 0..<16 {
                let flag = released[index]
                slots[index].set(c.observe { _ in if flag.isSet { _ = late.increment() } })
                if index.isMultiple(of: 2) { weakRefs.append(AttackWeak(slots[index].value)) }
            }
            let go = DispatchSemaphore(value: 0)
            let changer = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                for value in 1...200 { c.modify(value) }
            }
            let releaser = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                for index in 0..<16 {
                    slots[index].letGo()
                    _ = released[index].set()
                }
            }
            go.signal()
            go.signal()
            #expect(await attackWait(for: changer))
            #expect(await attackWait(for: releaser))
            #expect(late.value == 0, "round \(round): \(late.value) calls after their token's deinit returned")
            let allGone = weakRefs.allSatisfy { $0.object == nil }
            #expect(allGone)
        }
    }

    /// A token let go inside its own call, with a weak reference taken: its `deinit` runs on the delivering thread
    /// inside `invoke`, which then clears the calling thread in the token's kept memory.
    @Test func aWeaklyReferencedTokenLetGoInsideItsOwnCall() {
        let c = StateContainer(0, key: "attack.merge.ownCall.\(UUID().uuidString)")
        let slot = AttackSlot<SubscriptionToken>()
        let heard = AttackCounter()
        slot.set(c.observe { _ in
            _ = heard.increment()
            slot.letGo()
        })
        let weakToken = AttackWeak(slot.value)
        let after = c.observe { _ in _ = heard.increment() }
        c.modify(1)
        #expect(weakToken.object == nil)
        #expect(heard.value == 2)
        c.modify(2)
        #expect(heard.value == 3)
        withExtendedLifetime(after) {}
    }

    /// `observe(initial: true)` while another thread delivers: the first value comes later, from that thread, in a
    /// round that holds the entry; the listener lets its own token go in that very call.
    @Test func aTokenLetGoInsideItsOwnDeferredFirstCall() async {
        let c = StateContainer(0, key: "attack.merge.deferredInitial.\(UUID().uuidString)")
        let (blocker, entered, release) = attackListenerHeldAtOne(c)
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await attackWait(for: entered))
        let slot = AttackSlot<SubscriptionToken>()
        let calls = AttackCounter()
        slot.set(c.observe(initial: true) { _ in
            _ = calls.increment()
            slot.letGo()
        })
        let weakToken = AttackWeak(slot.value)
        #expect(calls.value == 0, "the first value came before the change being delivered")
        release.signal()
        #expect(await attackWait(for: delivered))
        #expect(calls.value == 1)
        #expect(weakToken.object == nil)
        c.modify(2)
        #expect(calls.value == 1)
        withExtendedLifetime(blocker) {}
    }

    /// A deferred first value whose token is let go before the round reaches it: the queued `initial` round holds
    /// the entry of a deinitialized token, and must skip it.
    @Test func aTokenLetGoBeforeItsDeferredFirstValueHearsNothing() async {
        let c = StateContainer(0, key: "attack.merge.deferredInitialGone.\(UUID().uuidString)")
        let (blocker, entered, release) = attackListenerHeldAtOne(c)
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await attackWait(for: entered))
        let calls = AttackCounter()
        var token: SubscriptionToken? = c.observe(initial: true) { _ in _ = calls.increment() }
        let weakToken = AttackWeak(token)
        token = nil
        #expect(weakToken.object == nil)
        release.signal()
        #expect(await attackWait(for: delivered))
        c.modify(2)
        #expect(calls.value == 0)
        withExtendedLifetime(blocker) {}
    }

    /// Containers and tokens of every kind let go at once from two threads: synchronous tokens with and without weak
    /// references, queued ones, named listeners, streams. Kept tokens report cancelled, streams finish.
    @Test func containersAndTokensOfEveryKindLetGoAtOnce() async {
        let queue = DispatchQueue(label: "attack.merge.everyKind")
        for round in 0..<150 {
            let container = AttackSlot<StateContainer<Int>>()
            let c = StateContainer(0, key: "attack.merge.everyKind.\(round).\(UUID().uuidString)")
            container.value = c
            let slots = (0..<8).map { _ in AttackSlot<SubscriptionToken>() }
            var weakRefs: [AttackWeak<SubscriptionToken>] = []
            for (index, slot) in slots.enumerated() {
                if index.isMultiple(of: 3) {
                    slot.set(c.observe(on: .queue(queue)) { _ in })
                } else {
                    slot.set(c.observe { _ in })
                }
                if index.isMultiple(of: 2) { weakRefs.append(AttackWeak(slot.value)) }
            }
            c.bind(name: "n") { _ in }
            let kept = c.observe { _ in }
            let keptQueued = c.observe(on: .queue(queue)) { _ in }
            let keptWeak = AttackWeak(kept)
            let stream = c.values
            let finished = DispatchSemaphore(value: 0)
            Task.detached {
                for await _ in stream {}
                finished.signal()
            }
            let go = DispatchSemaphore(value: 0)
            let tokensGone = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                for slot in slots { slot.letGo() }
            }
            let containerGone = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                container.value = nil
            }
            _ = consume c
            go.signal()
            go.signal()
            #expect(await attackWait(for: tokensGone))
            #expect(await attackWait(for: containerGone))
            #expect(kept.isCancelled && keptQueued.isCancelled, "round \(round)")
            #expect(keptWeak.object != nil)
            #expect(await attackWait(for: finished), "round \(round): the stream did not finish")
        }
    }

    // MARK: Queued observers

    /// A queued observer's `OwningToken` let go inside its call on the queue, then the container changes again.
    @Test func aQueuedObserversTokenLetGoInsideItsCall() async {
        let c = StateContainer(0, key: "attack.merge.queuedOwn.\(UUID().uuidString)")
        let queue = DispatchQueue(label: "attack.merge.queuedOwn")
        let slot = AttackSlot<SubscriptionToken>()
        let calls = AttackCounter()
        let done = DispatchSemaphore(value: 0)
        slot.set(c.observe(on: .queue(queue)) { _ in
            _ = calls.increment()
            slot.letGo()
            done.signal()
        })
        c.modify(1)
        #expect(await attackWait(for: done))
        c.modify(2)
        let flushed = DispatchSemaphore(value: 0)
        queue.async { flushed.signal() }
        #expect(await attackWait(for: flushed))
        #expect(calls.value == 1)
    }

    /// A queued observer's `OwningToken` let go on another thread while its call runs on the queue: the release
    /// returns only once the call ended.
    @Test func aQueuedObserversTokenLetGoWhileItsCallRuns() async {
        let c = StateContainer(0, key: "attack.merge.queuedWait.\(UUID().uuidString)")
        let queue = DispatchQueue(label: "attack.merge.queuedWait")
        let probe = AttackCancelProbe()
        let slot = AttackSlot<SubscriptionToken>()
        slot.set(c.observe(on: .queue(queue)) { _ in probe.call() })
        c.modify(1)
        #expect(await attackWait(for: probe.entered))
        let ended = await probe.cancel { slot.letGo() }
        #expect(ended, "letting the token go returned while its call still ran")
    }

    /// A synchronous token let go on another thread while its call runs: the `deinit` waits for the call.
    @Test func aSynchronousTokenLetGoWhileItsCallRuns() async {
        let c = StateContainer(0, key: "attack.merge.syncWait.\(UUID().uuidString)")
        let probe = AttackCancelProbe()
        let slot = AttackSlot<SubscriptionToken>()
        slot.set(c.observe { _ in probe.call() })
        _ = AttackWeak(slot.value)
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await attackWait(for: probe.entered))
        let ended = await probe.cancel { slot.letGo() }
        #expect(ended, "letting the token go returned while its call still ran")
        #expect(await attackWait(for: delivered))
    }

    // MARK: Store tokens

    /// A store's synchronous token (its own registration) let go inside its own call, with a weak reference taken;
    /// the store is held only by the dispatching thread and the token.
    @Test func aStoreTokenLetGoInsideItsOwnCall() {
        var store: Store<Pair, PairAction>? = Store(initialState: Pair(), reducer: pairReducer)
        let weakStore = AttackWeak(store)
        let slot = AttackSlot<SubscriptionToken>()
        let calls = AttackCounter()
        slot.set(store!.subscribe(\.a, initial: false) { _ in
            _ = calls.increment()
            slot.letGo()
        })
        let weakToken = AttackWeak(slot.value)
        let other = store!.subscribe(\.a, initial: false) { _ in }
        store!.dispatch(.a)
        #expect(weakToken.object == nil)
        store!.dispatch(.a)
        #expect(calls.value == 1)
        other.cancel()
        store = nil
        #expect(weakStore.object == nil, "the store outlived its subscriptions")
    }

    /// One subscriber lets go of another's token in the same round (the same key-path group and another group).
    @Test func aStoreTokenLetGoByAnEarlierSubscriberOfTheSameRound() {
        let store = Store(initialState: Pair(), reducer: pairReducer)
        let sameGroup = AttackSlot<SubscriptionToken>()
        let otherGroup = AttackSlot<SubscriptionToken>()
        let heard = AttackCounter()
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
            let store = Store(initialState: Pair(), reducer: pairReducer)
            let slots = (0..<12).map { _ in AttackSlot<SubscriptionToken>() }
            let released = (0..<12).map { _ in AttackFlag() }
            let late = AttackCounter()
            var weakRefs: [AttackWeak<SubscriptionToken>] = []
            for index in 0..<12 {
                let flag = released[index]
                let listener: @Sendable (Int) -> Void = { _ in if flag.isSet { _ = late.increment() } }
                slots[index].set(
                    index.isMultiple(of: 2)
                        ? store.subscribe(\.a, initial: false, listener)
                        : store.subscribe(select: { $0.a + $0.b }, isDuplicate: ==, initial: false, listener)
                )
                if index.isMultiple(of: 3) { weakRefs.append(AttackWeak(slots[index].value)) }
            }
            let go = DispatchSemaphore(value: 0)
            let dispatcher = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                for index in 0..<200 { store.dispatch(index.isMultiple(of: 2) ? .a : .b) }
            }
            let releaser = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                for index in 0..<12 {
                    slots[index].letGo()
                    _ = released[index].set()
                }
            }
            go.signal()
            go.signal()
            #expect(await attackWait(for: dispatcher))
            #expect(await attackWait(for: releaser))
            #expect(late.value == 0, "round \(round): \(late.value) calls after their token's deinit returned")
            let allGone = weakRefs.allSatisfy { $0.object == nil }
            #expect(allGone)
        }
    }

    /// A store token let go while its first value is being delivered by the busy store's processor.
    @Test func aStoreTokenLetGoWhileItsQueuedFirstValueRuns() async {
        let (store, blocker, entered, release) = attackStoreWithABlockingSubscriber(
            Pair(), reducer: pairReducer, holds: \.holds
        )
        let busy = onAThreadOfItsOwn { store.dispatch(.hold) }
        #expect(await attackWait(for: entered))
        let probe = AttackCancelProbe()
        let slot = AttackSlot<SubscriptionToken>()
        slot.set(store.subscribe(\.a) { _ in probe.call() })
        release.signal()
        #expect(await attackWait(for: probe.entered))
        let ended = await probe.cancel { slot.letGo() }
        #expect(ended, "letting the token go returned while its first call still ran")
        #expect(await attackWait(for: busy))
        withExtendedLifetime(blocker) {}
    }

    // MARK: Streams

    /// Container and store `values` loops ended (their tasks cancelled) while changes flow.
    @Test func valuesStreamsEndedWhileChangesFlow() async {
        for round in 0..<40 {
            let c = StateContainer(0, key: "attack.merge.streams.\(round).\(UUID().uuidString)")
            let store = Store(initialState: Pair(), reducer: pairReducer)
            let started = DispatchSemaphore(value: 0)
            let containerLoop = Task.detached {
                var first = true
                for await _ in c.values {
                    if first { started.signal(); first = false }
                }
            }
            let storeLoop = Task.detached {
                var first = true
                for await _ in store.values(\.a) {
                    if first { started.signal(); first = false }
                }
            }
            #expect(await attackWait(for: started, count: 2))
            let changer = onAThreadOfItsOwn {
                for _ in 0..<100 {
                    c.modify(c.value + 1)
                    store.dispatch(.a)
                }
            }
            containerLoop.cancel()
            storeLoop.cancel()
            await containerLoop.value
            await storeLoop.value
            #expect(await attackWait(for: changer))
            let weakStore = AttackWeak(store)
            _ = consume store
            #expect(await eventually(timeout: .seconds(attackPatience)) { weakStore.object == nil },
                    "round \(round): the ended stream kept the store")
        }
    }

    // MARK: StoreSubscribing

    /// Objects subscribing through the mixin let go while dispatches flow: nothing is delivered to a gone object,
    /// and the store is let go once they are.
    @Test func storeSubscribingObjectsLetGoWhileDispatchesFlow() async {
        for round in 0..<40 {
            var store: Store<Pair, PairAction>? = Store(initialState: Pair(), reducer: pairReducer)
            let weakStore = AttackWeak(store)
            let heard = AttackCounter()
            let watchers = AttackSlot<[Watcher]>()
            watchers.value = (0..<6).map { _ in Watcher(heard) }
            for watcher in watchers.value! {
                watcher.subscribe(store!) { watcher, _ in _ = watcher.heard.increment() }
            }
            let s = store!
            let go = DispatchSemaphore(value: 0)
            let dispatcher = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                for _ in 0..<100 { s.dispatch(.a) }
            }
            let releaser = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                watchers.value = nil
            }
            go.signal()
            go.signal()
            #expect(await attackWait(for: dispatcher))
            #expect(await attackWait(for: releaser))
            _ = consume s
            store!.dispatch(.a)
            store = nil
            let gone = await eventually(timeout: .seconds(attackPatience)) {
                _ = AssociatedObjectsTable.shared.releaseDeadOwners()
                return weakStore.object == nil
            }
            #expect(gone, "round \(round): the store outlived its mixin subscribers")
        }
    }
}
