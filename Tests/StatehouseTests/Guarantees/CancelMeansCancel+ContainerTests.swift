import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A token that listeners read from any thread, set once it exists.
private final class TokenBox: Sendable {
    let slot = Locked<SubscriptionToken?>(nil)
    var token: SubscriptionToken? { slot.withLock { $0 } }
}

/// The identity of the thread a cancel runs on, once it started (0 before).
private final class ThreadSlot: Sendable {
    let id = Atomic<UInt>(0)
}

/// An attached listener whose first call blocks (see ``CancelProbe``), on a queue of its own.
private final class BlockingListener: StateListener, Sendable {
    let probe = CancelProbe()
    let queue = DispatchQueue(label: "blockingListener")

    var stateListenerQueue: DispatchQueue { queue }

    func stateModified<T>(_ state: StateContainer<T>) {
        probe.call()
    }
}

/// Two tokens whose listeners cancel each other.
private final class MutualTokens: Sendable {
    let a = Locked<SubscriptionToken?>(nil)
    let b = Locked<SubscriptionToken?>(nil)
}

/// After `cancel()` (or a token's deinit) returns, no call of that listener starts or is still running: every
/// delivery, every way to cancel (again, from inside a call, from two threads, from a combined token), and the
/// listener's closure let go once `cancel()` returns.
@Suite("Cancel means cancel: container listeners", .serialized)
struct CancelMeansCancelContainerTests {
    /// A `.queue` listener's call is running and another change is enqueued behind it: `cancel()` waits for the
    /// running call (the enqueued one must not make it believe that no call runs).
    @Test func cancelWaitsForAQueuedCallThatIsRunningWhenAnotherChangeIsEnqueued() async {
        for round in 0..<3 {
            let count = StateContainer(0, key: "cancelQueued.container.\(round)")
            let probe = CancelProbe()
            let token = count.observe(on: .queue(DispatchQueue(label: "cancelQueued"))) { _ in probe.call() }
            count.modify(1)
            #expect(await waitOffThePool(for: probe.entered), "round \(round): the queued call never started")
            // While the first call runs on the queue, this thread delivers the next change: it only enqueues it,
            // and must not make cancel() believe that no call is running.
            count.modify(2)
            let callEnded = await probe.cancel { token.cancel() }
            #expect(callEnded, "round \(round): cancel() returned while the listener was still running")
        }
    }

    /// The same for an attached `StateListener`, whose cancel is `detach(listener:)`.
    @Test func detachWaitsForAnAttachedListenerCallThatIsRunningWhenAnotherChangeIsEnqueued() async {
        for round in 0..<3 {
            let count = StateContainer(0, key: "cancelQueued.attached.\(round)")
            let listener = BlockingListener()
            count.attach(listener: listener)
            count.modify(1)
            #expect(await waitOffThePool(for: listener.probe.entered), "round \(round): the listener was never called")
            count.modify(2)
            let callEnded = await listener.probe.cancel { count.detach(listener: listener) }
            #expect(callEnded, "round \(round): detach returned while the listener was still running")
        }
    }

    /// A combined token cancelled on thread Q (which waits for part 1's call on thread P), then cancelled again from
    /// inside that call on P: P's cancel must return (it is the thread in the call), and Q's must return only once
    /// the call ended. Catches a deadlock of the combined override (waiting by cancelling parts again) or Q returning
    /// early.
    @Test func combinedTokenCancelledInsideAPartWhileAnotherThreadCancelsIt() async {
        let c1 = StateContainer(0, key: "cancelstate.c1.\(UUID().uuidString)")
        let c2 = StateContainer(0, key: "cancelstate.c2.\(UUID().uuidString)")
        let box = TokenBox()
        let qThread = Atomic<UInt>(0)
        let entered = DispatchSemaphore(value: 0)
        let innerCancelReturned = Atomic<Bool>(false)
        let qSawWait = Atomic<Bool>(false)
        let inside = Atomic<Bool>(false)
        let t1 = c1.observe { value in
            guard value == 1 else { return }
            inside.store(true, ordering: .sequentiallyConsistent)
            entered.signal()
            // Wait until Q waits for this call, then cancel the combined token from inside it.
            let waited = spinWait(timeout: .seconds(60)) {
                let q = qThread.load(ordering: .sequentiallyConsistent)
                return q != 0 && CancelWaits.shared.isWaiting(q)
            }
            qSawWait.store(waited, ordering: .sequentiallyConsistent)
            box.token?.cancel()
            innerCancelReturned.store(true, ordering: .sequentiallyConsistent)
            inside.store(false, ordering: .sequentiallyConsistent)
        }
        let t2 = c2.observe { _ in }
        let combined = SubscriptionToken.combining([t1, t2])
        box.slot.withLock { $0 = combined }
        let delivered = onAThreadOfItsOwn { c1.modify(1) }
        #expect(await waitOffThePool(for: entered))
        let insideWhenQReturned = Atomic<Bool>(false)
        let qDone = onAThreadOfItsOwn {
            qThread.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
            combined.cancel()
            insideWhenQReturned.store(inside.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
        }
        #expect(await waitOffThePool(for: delivered), "the listener's own cancel of the combined token never returned")
        #expect(await waitOffThePool(for: qDone), "the other thread's cancel never returned")
        let loaded1 = innerCancelReturned.load(ordering: .sequentiallyConsistent)
        #expect(loaded1)
        let loaded2 = qSawWait.load(ordering: .sequentiallyConsistent)
        #expect(loaded2, "Q never waited for the call")
        let loaded3 = insideWhenQReturned.load(ordering: .sequentiallyConsistent)
        #expect(!loaded3, "Q's cancel returned with the call running")
        #expect(t1.isCancelled && t2.isCancelled)
    }

    /// Three cancels of one token: the first on Q waits for the held call on P; a second and a third, on their own
    /// threads after the flag is set, must each return only after the call ended (every cancel waits). With
    /// `combined`, the token is a combined one of the held listener and another: its later cancels wait through the
    /// override (cancelling the parts again). A cancel that waited only when its own exchange set the flag would
    /// return early here.
    @Test(arguments: [false, true]) func everyLaterCancelWaitsForTheHeldCall(combined: Bool) async {
        let c = StateContainer(0, key: "cancelstate.many.\(UUID().uuidString)")
        let other = StateContainer(0, key: "cancelstate.many.other.\(UUID().uuidString)")
        let held = HeldListenerCall()
        let part = c.observe { value in
            guard value == 1 else { return }
            held.call()
        }
        let token = combined ? SubscriptionToken.combining([part, other.observe { _ in }]) : part
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await waitOffThePool(for: held.entered))
        let early = Atomic<Int>(0)
        let returnedCount = Atomic<Int>(0)
        let threads = (0..<3).map { _ in ThreadSlot() }
        var dones: [DispatchSemaphore] = []
        for i in 0..<3 {
            let t = threads[i]
            dones.append(onAThreadOfItsOwn {
                t.id.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
                token.cancel()
                if held.isInside { early.add(1, ordering: .sequentiallyConsistent) }
                returnedCount.add(1, ordering: .sequentiallyConsistent)
            })
        }
        let allWaiting = await offThePool {
            spinWait(timeout: .seconds(60)) {
                let waiting = threads.filter { t in
                    let id = t.id.load(ordering: .sequentiallyConsistent)
                    return id != 0 && CancelWaits.shared.isWaiting(id)
                }.count
                return waiting + returnedCount.load(ordering: .sequentiallyConsistent) >= 3
            }
        }
        #expect(allWaiting, "the cancels neither waited nor returned")
        held.letOut()
        for d in dones { #expect(await waitOffThePool(for: d)) }
        #expect(await waitOffThePool(for: delivered))
        let loaded4 = early.load(ordering: .sequentiallyConsistent)
        #expect(loaded4 == 0, "a cancel returned while the call ran")
    }

    /// A listener that changes its own container from inside its call, then stays inside: if the nested change were
    /// delivered inline on the same thread, its invoke would clear `callingThread` while the outer call still runs,
    /// and a cancel on another thread would return with the call running.
    @Test func aListenerChangingItsOwnContainerInsideItsCallIsStillWaitedFor() async {
        let c = StateContainer(0, key: "cancelstate.reentrant.\(UUID().uuidString)")
        let held = HeldListenerCall()
        let token = c.observe { value in
            guard value == 1 else { return }
            c.modify(2)
            held.call()
        }
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await waitOffThePool(for: held.entered))
        let q = ThreadSlot()
        let returned = Atomic<Bool>(false)
        let insideWhenReturned = Atomic<Bool>(false)
        let qDone = onAThreadOfItsOwn {
            q.id.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
            token.cancel()
            insideWhenReturned.store(held.isInside, ordering: .sequentiallyConsistent)
            returned.store(true, ordering: .sequentiallyConsistent)
        }
        _ = await offThePool {
            spinWait(timeout: .seconds(60)) {
                let id = q.id.load(ordering: .sequentiallyConsistent)
                return returned.load(ordering: .sequentiallyConsistent) || (id != 0 && CancelWaits.shared.isWaiting(id))
            }
        }
        held.letOut()
        #expect(await waitOffThePool(for: qDone))
        #expect(await waitOffThePool(for: delivered))
        let loaded6 = insideWhenReturned.load(ordering: .sequentiallyConsistent)
        #expect(!loaded6, "cancel() returned while the call ran")
    }

    /// Two parts of one combined token, each inside a call on its own thread, both cancel the combined token: each
    /// waits for the other part's call (the second through the override), a cycle the wait registry must break.
    /// Catches a deadlock of that wait.
    @Test func bothPartsOfACombinedTokenCancelItFromInsideTheirCalls() async {
        let c1 = StateContainer(0, key: "cancelstate.both1.\(UUID().uuidString)")
        let c2 = StateContainer(0, key: "cancelstate.both2.\(UUID().uuidString)")
        let box = TokenBox()
        let bothInside = DispatchSemaphore(value: 0)
        let count = Atomic<Int>(0)
        let listener: @Sendable (Int) -> Void = { value in
            guard value == 1 else { return }
            count.add(1, ordering: .sequentiallyConsistent)
            _ = spinWait(timeout: .seconds(60)) { count.load(ordering: .sequentiallyConsistent) >= 2 }
            bothInside.signal()
            box.token?.cancel()
        }
        let t1 = c1.observe(listener)
        let t2 = c2.observe(listener)
        box.slot.withLock { $0 = SubscriptionToken.combining([t1, t2]) }
        let d1 = onAThreadOfItsOwn { c1.modify(1) }
        let d2 = onAThreadOfItsOwn { c2.modify(1) }
        #expect(await waitOffThePool(for: bothInside, count: 2))
        #expect(await waitOffThePool(for: d1), "a part's cancel of the combined token never returned")
        #expect(await waitOffThePool(for: d2), "a part's cancel of the combined token never returned")
    }

    /// cancelWithoutWaiting() (an async stream's termination) racing cancel() on other threads: every cancel() whose
    /// exchange set the flag waits for the held call; nothing deadlocks; the listener is detached exactly once.
    @Test func cancelWithoutWaitingRacingCancelNeverDeadlocksAndTheWinnerWaits() async {
        for round in 0..<50 {
            let c = StateContainer(0, key: "cancelstate.nowait.\(round).\(UUID().uuidString)")
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let late = Atomic<Bool>(false)
            let token = c.observe { value in
                if value == 2 { late.store(true, ordering: .sequentiallyConsistent) }
                guard value == 1 else { return }
                entered.signal()
                _ = release.wait(timeout: .now() + .seconds(signalPatience))
            }
            let delivered = onAThreadOfItsOwn { c.modify(1) }
            #expect(await waitOffThePool(for: entered))
            let go = DispatchSemaphore(value: 0)
            let a = onAThreadOfItsOwn { _ = go.wait(timeout: .now() + .seconds(signalPatience)); token.cancel() }
            let b = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience)); token.cancelWithoutWaiting()
            }
            go.signal(); go.signal()
            #expect(await waitOffThePool(for: b), "cancelWithoutWaiting waited")
            release.signal()
            #expect(await waitOffThePool(for: a))
            #expect(await waitOffThePool(for: delivered))
            c.modify(2)
            let wasLate = late.load(ordering: .sequentiallyConsistent)
            #expect(!wasLate, "called after cancellation")
        }
    }

    /// A token let go (its last reference) from inside its own call while another thread's cancel() waits for that
    /// call: the deinit's cancel on the calling thread must not wait for itself, and the other cancel returns only
    /// after the call. A queued listener's token, which owns its registration: the other thread cancels that.
    @Test func aTokenLetGoInsideItsOwnCallWhileAnotherThreadCancelsIt() async throws {
        let c = StateContainer(0, key: "cancelstate.selfrelease.\(UUID().uuidString)")
        let box = TokenBox()
        let q = ThreadSlot()
        let entered = DispatchSemaphore(value: 0)
        let inside = Atomic<Bool>(false)
        let token = c.observe(on: .queue(DispatchQueue(label: "cancelstate.selfrelease"))) { value in
            guard value == 1 else { return }
            inside.store(true, ordering: .sequentiallyConsistent)
            entered.signal()
            _ = spinWait(timeout: .seconds(60)) {
                let id = q.id.load(ordering: .sequentiallyConsistent)
                return id != 0 && CancelWaits.shared.isWaiting(id)
            }
            box.slot.withLock { $0 = nil }
            inside.store(false, ordering: .sequentiallyConsistent)
        }
        let subscription = try #require(token as? OwningToken).subscription
        box.slot.withLock { $0 = consume token }
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await waitOffThePool(for: entered))
        let insideWhenReturned = Atomic<Bool>(false)
        let qDone = onAThreadOfItsOwn {
            q.id.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
            subscription.cancel()
            insideWhenReturned.store(inside.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
        }
        #expect(await waitOffThePool(for: delivered), "the token's deinit inside its own call never returned")
        #expect(await waitOffThePool(for: qDone))
        let early = insideWhenReturned.load(ordering: .sequentiallyConsistent)
        #expect(!early, "cancel() returned while the call ran")
    }

    /// Two listeners on a concurrent queue each cancel the other ("the first to answer wins"), each cancel() waiting
    /// for the other's running call, which is itself waiting in cancel(): both return, no deadlock.
    @Test func twoQueuedListenersCancellingEachOther() {
        let queue = DispatchQueue(label: "mutualCancel.concurrent", attributes: .concurrent)
        let container = StateContainer(0, key: "mutualCancel.\(UUID().uuidString)")
        let tokens = MutualTokens()
        let finished = Atomic<Int>(0)
        let arrived = DispatchGroup()
        arrived.enter(); arrived.enter()
        tokens.a.withLock { $0 = container.observe(on: .queue(queue)) { _ in
            arrived.leave(); arrived.wait()                  // both calls are running now
            tokens.b.withLock { $0 }?.cancel()
            finished.add(1, ordering: .relaxed)
        } }
        tokens.b.withLock { $0 = container.observe(on: .queue(queue)) { _ in
            arrived.leave(); arrived.wait()
            tokens.a.withLock { $0 }?.cancel()
            finished.add(1, ordering: .relaxed)
        } }
        container.modify(1)
        let deadline = Date().addingTimeInterval(10)
        while finished.load(ordering: .relaxed) < 2 && Date() < deadline { usleep(10_000) }
        #expect(finished.load(ordering: .relaxed) == 2, "deadlock: each cancel() waits for the other's call")
    }

    /// `cancel()` lets go of the listener's closure, and what it captured, before it returns.
    @Test func cancelLetsGoOfTheListenerBeforeItReturns() {
        let container = StateContainer(0, key: uniqueKey("cancel.remover.cancel"))
        let (token, weakCaptured): (SubscriptionToken, SharedWeak<Witness>) = {
            let captured = Witness()
            return (container.observe { _ in withExtendedLifetime(captured) {} }, SharedWeak(captured))
        }()
        container.modify(1)
        #expect(weakCaptured.object != nil)
        token.cancel()
        #expect(weakCaptured.object == nil, "the removed entry was not let go")
    }

    /// Releasing the last reference to a token lets go of its listener's closure at once.
    @Test func releasingATokenLetsGoOfItsListener() {
        let container = StateContainer(0, key: uniqueKey("cancel.remover.deinit"))
        let captured = Witness()
        let weakCaptured = SharedWeak(captured)
        var token: SubscriptionToken? = container.observe { [captured] _ in withExtendedLifetime(captured) {} }
        _ = consume captured
        #expect(weakCaptured.object != nil)
        withExtendedLifetime(token) {}
        token = nil
        #expect(weakCaptured.object == nil)
    }
}
