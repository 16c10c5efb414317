import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// The only strong reference to an object, that a thread of the test lets go outside any lock.
private final class LastReference<T: AnyObject & Sendable>: Sendable {
    private let slot: Locked<T?>
    init(_ object: T) { slot = Locked(object) }

    /// Lets go of the object on the calling thread, after this box's lock is released: its deinit runs here.
    func letGo() {
        withExtendedLifetime(slot.withLock { $0.take() }) {}
    }

    /// A strong reference, if the object was not let go (it may be the last one once the caller holds it).
    var object: T? { slot.withLock { $0 } }
}

/// Cancels `token` on a thread of its own while `held`'s call is inside, lets the call out once that `cancel()` waits
/// for it (seen in `CancelWaits`, after its first hundred yields) or returned, and says whether it returned with the
/// call still inside; `nil` if it neither waited nor returned within the deadline.
private func cancelWhileTheCallIsHeld(_ token: SubscriptionToken, _ held: HeldListenerCall) async -> Bool? {
    let thread = Atomic<UInt>(0)
    let returned = Atomic<Bool>(false)
    let insideWhenReturned = Atomic<Bool>(false)
    let done = onAThreadOfItsOwn {
        thread.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
        token.cancel()
        insideWhenReturned.store(held.isInside, ordering: .sequentiallyConsistent)
        returned.store(true, ordering: .sequentiallyConsistent)
    }
    let waitingOrReturned = await offThePool {
        spinWait(timeout: .seconds(60)) {
            let canceller = thread.load(ordering: .sequentiallyConsistent)
            return returned.load(ordering: .sequentiallyConsistent)
                || (canceller != 0 && CancelWaits.shared.isWaiting(canceller))
        }
    }
    held.letOut()
    guard waitingOrReturned, await waitOffThePool(for: done) else { return nil }
    return insideWhenReturned.load(ordering: .sequentiallyConsistent)
}

/// Delivers 1 to `container` on a thread of its own, a call `held` holds; cancels `token` on another thread, which
/// waits for that call; then cancels it again with ``cancelWhileTheCallIsHeld(_:_:)``, whose answer it returns.
private func cancelTwiceWhileTheCallIsHeld(
    _ container: StateContainer<Int>, _ token: SubscriptionToken, _ held: HeldListenerCall
) async -> Bool? {
    let delivered = onAThreadOfItsOwn { container.modify(1) }
    #expect(await waitOffThePool(for: held.entered))
    let firstReturned = onAThreadOfItsOwn { token.cancel() }
    let flagSet = await offThePool { spinWait(timeout: .seconds(60)) { token.isCancelled } }
    #expect(flagSet)
    let insideWhenSecondReturned = await cancelWhileTheCallIsHeld(token, held)
    #expect(await waitOffThePool(for: firstReturned), "the first cancel() never returned")
    #expect(await waitOffThePool(for: delivered))
    return insideWhenSecondReturned
}

/// A container's deinit cancels its subscriptions and waits for their calls in progress, without waiting for itself;
/// a second `cancel()` of a token waits for the call the first one waits for.
@Suite("Cancel means cancel: a container's end and a second cancel wait for the call in progress", .serialized)
struct CancelMeansCancelContainerEndTests {
    /// The deinit takes the state out, then cancels the subscriptions, waiting for a queued call in progress. A
    /// token it already cancelled must have its closure released once `cancel()` returns ("the closure is released,
    /// at once", Listeners.md), not kept in the taken-out state until the deinit's last wait ended.
    /// A deinit that emptied the taken-out table only after all its cancellations would keep the closure.
    @Test func aTokenCancelledByTheDeinitHasItsClosureReleasedWhileTheDeinitWaitsForAQueuedCall() async {
        var container: StateContainer<Int>? = StateContainer(0, key: "linkstate.release.\(UUID().uuidString)")
        var canary: Witness? = Witness()
        let weakCanary = SharedWeak(canary)
        let token = container!.observe { [canary] _ in withExtendedLifetime(canary) {} }
        canary = nil
        let held = HeldListenerCall()
        let queued = container!.observe(on: .queue(DispatchQueue(label: "linkstate.release"))) { value in
            if value == 1 { held.call() }
        }
        container!.modify(1)
        #expect(await waitOffThePool(for: held.entered))
        let last = LastReference(container.take()!)
        let ended = onAThreadOfItsOwn { last.letGo() }
        // The deinit cancelled `token` (slot 0), then `queued` (slot 1), and waits for the queued call.
        let deinitWaits = await offThePool {
            spinWait(timeout: .seconds(60)) { token.isCancelled && queued.isCancelled }
        }
        #expect(deinitWaits)
        token.cancel()
        let releasedOnceCancelled = weakCanary.object == nil
        held.letOut()
        #expect(await waitOffThePool(for: ended), "the deinit never returned")
        #expect(releasedOnceCancelled, "cancel() returned, and the closure it cancelled is still alive")
        #expect(weakCanary.object == nil, "the closure outlived its container's deinit")
    }

    /// The deinit cancels a queued subscription whose call is in progress (no strong reference to the container
    /// there): once the deinit returned, that call has ended, and no call starts after.
    /// A deinit that cancelled without waiting (`cancelWithoutWaiting()`) would return with the call running.
    @Test func afterTheDeinitReturnsNoQueuedCallIsRunning() async {
        for round in 0..<5 {
            var container: StateContainer<Int>? = StateContainer(0, key: "linkstate.q.\(round).\(UUID())")
            let probe = CancelProbe()
            let lateCalls = SharedCounter()
            let ended = SharedFlag()
            let token = container!.observe(on: .queue(DispatchQueue(label: "linkstate.q"))) { _ in
                if ended.isSet { lateCalls.increment() }
                probe.call()
            }
            container!.modify(1)
            #expect(await waitOffThePool(for: probe.entered))
            let last = LastReference(container.take()!)
            let callEnded = await probe.cancel {
                last.letGo()
                ended.set()
            }
            #expect(callEnded, "round \(round): the deinit returned while a queued call of its listener ran")
            #expect(token.isCancelled)
            token.cancel()
            #expect(lateCalls.value == 0)
        }
    }

    /// A second `cancel()` of one token, on another thread, while the first waits for the call in progress: it must
    /// wait too ("after cancel() returns, no call ... is still running"), although it finds the token already
    /// cancelled.
    @Test func aSecondCancelOnAnotherThreadWaitsForTheCallInProgress() async {
        let container = StateContainer(0, key: "linkstate.twice.\(UUID().uuidString)")
        let held = HeldListenerCall()
        let token = container.observe { value in if value == 1 { held.call() } }
        let insideWhenSecondReturned = await cancelTwiceWhileTheCallIsHeld(container, token, held)
        #expect(insideWhenSecondReturned == false, "the second cancel() returned while the listener's call still ran")
    }

    /// The same for a token combining several (as StatehouseMetrics makes): its calls are its parts', so a second
    /// cancel waits by cancelling the parts again, each of which waits for its own call.
    @Test func aSecondCancelOfACombinedTokenWaitsForItsPartsCall() async {
        let container = StateContainer(0, key: "linkstate.combined.\(UUID().uuidString)")
        let held = HeldListenerCall()
        let token = SubscriptionToken.combining([
            container.observe { _ in },
            container.observe { value in if value == 1 { held.call() } },
        ])
        let insideWhenSecondReturned = await cancelTwiceWhileTheCallIsHeld(container, token, held)
        #expect(insideWhenSecondReturned == false, "the second cancel() returned while a part's call still ran")
    }

    /// The same through the deinit: the container ends (its deinit cancels a queued subscription and waits for its
    /// call), and the token's own `cancel()` on another thread, which finds the token already cancelled, waits for
    /// that call too.
    @Test func aTokenCancelledWhileItsContainersDeinitWaitsWaitsForTheCallToo() async {
        var container: StateContainer<Int>? = StateContainer(0, key: "linkstate.dq.\(UUID().uuidString)")
        let held = HeldListenerCall()
        let token = container!.observe(on: .queue(DispatchQueue(label: "linkstate.dq"))) { value in
            if value == 1 { held.call() }
        }
        container!.modify(1)
        #expect(await waitOffThePool(for: held.entered))
        let last = LastReference(container.take()!)
        let ended = onAThreadOfItsOwn { last.letGo() }
        let flagSet = await offThePool { spinWait(timeout: .seconds(60)) { token.isCancelled } }
        #expect(flagSet)
        let insideWhenCancelReturned = await cancelWhileTheCallIsHeld(token, held)
        #expect(await waitOffThePool(for: ended), "the deinit never returned")
        #expect(insideWhenCancelReturned == false, "cancel() returned while the listener's queued call still ran")
    }

    /// A queued listener holds the container's last reference and lets go of it inside its own call: the deinit runs
    /// on the queue's thread, inside that call (it must not wait for itself), while another queued listener's call
    /// is held; that one, let out, cancels a third token. Everything ends, and the link goes with the tokens.
    /// A removal that took the container's state for present (it is gone once the deinit began) would crash here.
    @Test func aContainerEndsInsideItsOwnQueuedListenersCall() async {
        for round in 0..<10 {
            var container: StateContainer<Int>? = StateContainer(0, key: "linkstate.own.\(round).\(UUID())")
            let weakContainer = SharedWeak(container)
            let weakLink = SharedWeak(container!.link)
            let last = LastReference(container.take()!)
            let held = HeldListenerCall()
            let modified = SharedFlag()
            let third = Locked<SubscriptionToken?>(last.object!.observe { _ in })
            let endedInside = DispatchSemaphore(value: 0)
            var other: SubscriptionToken? = last.object!.observe(on: .queue(DispatchQueue(label: "ls.b"))) {
                value in
                guard value == 1 else { return }
                held.call()
                third.withLock { $0 }?.cancel()
            }
            var own: SubscriptionToken? = last.object!.observe(on: .queue(DispatchQueue(label: "ls.a"))) {
                value in
                guard value == 1 else { return }
                spinWait(timeout: .seconds(60)) { modified.isSet && held.isInside }
                last.letGo()  // the last reference: the deinit runs here, inside this call
                endedInside.signal()
            }
            let modifier = onAThreadOfItsOwn {
                last.object?.modify(1)
                modified.set()
            }
            #expect(await waitOffThePool(for: modifier))
            #expect(await waitOffThePool(for: held.entered))
            // The deinit now waits for `other`'s call.
            do {
                // Scoped: a debug build keeps a local alive until the end of its scope.
                let otherToken = other!
                let waits = await offThePool { spinWait(timeout: .seconds(60)) { otherToken.isCancelled } }
                #expect(waits)
                held.letOut()
                #expect(await waitOffThePool(for: endedInside, seconds: 30), "round \(round): the deinit never returned")
                #expect(weakContainer.object == nil)
                #expect(own!.isCancelled && otherToken.isCancelled && third.withLock { $0!.isCancelled })
            }
            own = nil
            other = nil
            third.withLock { $0 = nil }
            let linkGone = await eventually(timeout: .seconds(20)) { weakLink.object == nil }
            #expect(linkGone, "round \(round): the link outlived its container and every token")
        }
    }
}
