import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A container's synchronous token is its registration, and the container's table does not own it: a delivery may
/// reach the entry of a token whose last reference went, whose `deinit` has run. Letting a token go is a cancel: no
/// call starts after its `deinit` returned, none is still running then, and a round skips its entry.
@Suite("Cancel means cancel: a container token let go", .serialized)
struct CancelMeansCancelTokenReleaseTests {
    /// A token with a `weak` reference taken (its counts move to a side table) let go on another thread while a
    /// round, held inside an earlier listener, has its entry still ahead: many rounds, the walk released right after.
    /// No listener runs after its token's `deinit` returned.
    @Test func weaklyReferencedTokensLetGoWhileARoundWalksTowardsThem() async {
        for round in 0..<100 {
            let c = StateContainer(0, key: "merge.weakWalk.\(round).\(UUID().uuidString)")
            let (first, entered, release) = listenerHeldAtOne(c)
            let letGo = SharedFlag()
            let heardAfter = SharedCounter()
            let slots = (0..<4).map { _ in SharedSlot<SubscriptionToken>() }
            var weakRefs: [SharedWeak<SubscriptionToken>] = []
            for slot in slots {
                slot.set(c.observe { _ in if letGo.isSet { _ = heardAfter.increment() } })
                weakRefs.append(SharedWeak(slot.value))
            }
            let delivered = onAThreadOfItsOwn { c.modify(1) }
            #expect(await waitOffThePool(for: entered))
            let gone = onAThreadOfItsOwn {
                for slot in slots { slot.letGo() }
                _ = letGo.set()
            }
            #expect(await waitOffThePool(for: gone))
            release.signal()
            #expect(await waitOffThePool(for: delivered))
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
            let c = StateContainer(0, key: "merge.flow.\(round).\(UUID().uuidString)")
            let slots = (0..<16).map { _ in SharedSlot<SubscriptionToken>() }
            let released = (0..<16).map { _ in SharedFlag() }
            let late = SharedCounter()
            var weakRefs: [SharedWeak<SubscriptionToken>] = []
            for index in 0..<16 {
                let flag = released[index]
                slots[index].set(c.observe { _ in if flag.isSet { _ = late.increment() } })
                if index.isMultiple(of: 2) { weakRefs.append(SharedWeak(slots[index].value)) }
            }
            let go = DispatchSemaphore(value: 0)
            let changer = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                for value in 1...200 { c.modify(value) }
            }
            let releaser = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                for index in 0..<16 {
                    slots[index].letGo()
                    _ = released[index].set()
                }
            }
            go.signal()
            go.signal()
            #expect(await waitOffThePool(for: changer))
            #expect(await waitOffThePool(for: releaser))
            #expect(late.value == 0, "round \(round): \(late.value) calls after their token's deinit returned")
            let allGone = weakRefs.allSatisfy { $0.object == nil }
            #expect(allGone)
        }
    }

    /// A token let go inside its own call, with a weak reference taken: its `deinit` runs on the delivering thread
    /// inside `invoke`, which then clears the calling thread in the token's kept memory. It is never called again.
    @Test func aWeaklyReferencedTokenLetGoInsideItsOwnCall() {
        let c = StateContainer(0, key: "merge.ownCall.\(UUID().uuidString)")
        let slot = SharedSlot<SubscriptionToken>()
        let heard = SharedCounter()
        slot.set(c.observe { _ in
            _ = heard.increment()
            slot.letGo()
        })
        let weakToken = SharedWeak(slot.value)
        let after = c.observe { _ in _ = heard.increment() }
        c.modify(1)
        #expect(weakToken.object == nil)
        #expect(heard.value == 2)
        c.modify(2)
        #expect(heard.value == 3)
        withExtendedLifetime(after) {}
    }

    /// `observe(initial: true)` while another thread delivers: the first value comes later, from that thread, in a
    /// round that holds the entry; the listener lets its own token go in that very call, and hears nothing after.
    @Test func aTokenLetGoInsideItsOwnDeferredFirstCall() async {
        let c = StateContainer(0, key: "merge.deferredInitial.\(UUID().uuidString)")
        let (blocker, entered, release) = listenerHeldAtOne(c)
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await waitOffThePool(for: entered))
        let slot = SharedSlot<SubscriptionToken>()
        let calls = SharedCounter()
        slot.set(c.observe(initial: true) { _ in
            _ = calls.increment()
            slot.letGo()
        })
        let weakToken = SharedWeak(slot.value)
        #expect(calls.value == 0, "the first value came before the change being delivered")
        release.signal()
        #expect(await waitOffThePool(for: delivered))
        #expect(calls.value == 1)
        #expect(weakToken.object == nil)
        c.modify(2)
        #expect(calls.value == 1)
        withExtendedLifetime(blocker) {}
    }

    /// A deferred first value whose token is let go before the round reaches it: the queued `initial` round holds
    /// the entry of a deinitialized token, and must skip it.
    @Test func aTokenLetGoBeforeItsDeferredFirstValueHearsNothing() async {
        let c = StateContainer(0, key: "merge.deferredInitialGone.\(UUID().uuidString)")
        let (blocker, entered, release) = listenerHeldAtOne(c)
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await waitOffThePool(for: entered))
        let calls = SharedCounter()
        var token: SubscriptionToken? = c.observe(initial: true) { _ in _ = calls.increment() }
        let weakToken = SharedWeak(token)
        token = nil
        #expect(weakToken.object == nil)
        release.signal()
        #expect(await waitOffThePool(for: delivered))
        c.modify(2)
        #expect(calls.value == 0)
        withExtendedLifetime(blocker) {}
    }

    /// A queued observer's `OwningToken` let go inside its call on the queue, then the container changes again: no
    /// second call.
    @Test func aQueuedObserversTokenLetGoInsideItsCall() async {
        let c = StateContainer(0, key: "merge.queuedOwn.\(UUID().uuidString)")
        let queue = DispatchQueue(label: "merge.queuedOwn")
        let slot = SharedSlot<SubscriptionToken>()
        let calls = SharedCounter()
        let done = DispatchSemaphore(value: 0)
        slot.set(c.observe(on: .queue(queue)) { _ in
            _ = calls.increment()
            slot.letGo()
            done.signal()
        })
        c.modify(1)
        #expect(await waitOffThePool(for: done))
        c.modify(2)
        let flushed = DispatchSemaphore(value: 0)
        queue.async { flushed.signal() }
        #expect(await waitOffThePool(for: flushed))
        #expect(calls.value == 1)
    }

    /// A queued observer's `OwningToken` let go on another thread while its call runs on the queue: the release
    /// returns only once the call ended.
    @Test func aQueuedObserversTokenLetGoWhileItsCallRuns() async {
        let c = StateContainer(0, key: "merge.queuedWait.\(UUID().uuidString)")
        let queue = DispatchQueue(label: "merge.queuedWait")
        let probe = CancelProbe()
        let slot = SharedSlot<SubscriptionToken>()
        slot.set(c.observe(on: .queue(queue)) { _ in probe.call() })
        c.modify(1)
        #expect(await waitOffThePool(for: probe.entered))
        let ended = await probe.cancel { slot.letGo() }
        #expect(ended, "letting the token go returned while its call still ran")
    }

    /// A synchronous token let go on another thread while its call runs: the `deinit` waits for the call.
    @Test func aSynchronousTokenLetGoWhileItsCallRuns() async {
        let c = StateContainer(0, key: "merge.syncWait.\(UUID().uuidString)")
        let probe = CancelProbe()
        let slot = SharedSlot<SubscriptionToken>()
        slot.set(c.observe { _ in probe.call() })
        _ = SharedWeak(slot.value)
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await waitOffThePool(for: probe.entered))
        let ended = await probe.cancel { slot.letGo() }
        #expect(ended, "letting the token go returned while its call still ran")
        #expect(await waitOffThePool(for: delivered))
    }

    /// A round holds the first listener's call while the second listener's token is let go on another thread: the
    /// round then walks the entry of a token whose `deinit` has run, and must skip it.
    @Test func aTokenLetGoWhileARoundWalksTowardsItsEntryIsSkipped() async {
        let c = StateContainer(0, key: "tokenIsRegistration.walk.\(UUID().uuidString)")
        let (first, entered, release) = listenerHeldAtOne(c)
        let heardAfterLetGo = SharedCounter()
        let letGo = SharedFlag()
        let second = SharedSlot<SubscriptionToken>()
        second.value = c.observe { _ in
            if letGo.isSet { _ = heardAfterLetGo.increment() }
        }
        let weakSecond = SharedWeak(second.value)
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await waitOffThePool(for: entered))
        _ = letGo.set()
        second.value = nil
        #expect(weakSecond.object == nil, "the table kept the token alive")
        release.signal()
        #expect(await waitOffThePool(for: delivered))
        #expect(heardAfterLetGo.value == 0, "a token's listener was called after its deinit")
        withExtendedLifetime(first) {}
    }

    /// The same window from inside the round: the first listener lets go of the second's last reference, on the
    /// delivering thread itself.
    @Test func aTokenLetGoByAnEarlierListenerOfTheSameRoundIsSkipped() {
        let c = StateContainer(0, key: "tokenIsRegistration.inside.\(UUID().uuidString)")
        let second = SharedSlot<SubscriptionToken>()
        let heard = SharedCounter()
        let first = c.observe { value in
            if value == 1 { second.value = nil }
        }
        second.value = c.observe { _ in _ = heard.increment() }
        c.modify(1)
        c.modify(2)
        #expect(heard.value == 0)
        withExtendedLifetime(first) {}
    }
}
