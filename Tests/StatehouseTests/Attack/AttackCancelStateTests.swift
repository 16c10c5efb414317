// Attacks 99dd7c0 (three-state cancellation; every cancel waits; combined tokens wait by cancelling their parts again)
// and d211413 (a container's change count read through its link), by a reviewer in session 17.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport


private final class TokenBox: Sendable {
    let slot = Locked<SubscriptionToken?>(nil)
    var token: SubscriptionToken? { slot.withLock { $0 } }
}

private final class ThreadSlot: Sendable {
    let id = Atomic<UInt>(0)
}

@Suite(.serialized) struct AttackCancelStateTests {
    /// A combined token cancelled on thread Q (which waits for part 1's call on thread P), then cancelled again from
    /// inside that call on P: P's cancel must return (it is the thread in the call), and Q's must return only once
    /// the call ended. Catches a deadlock of the combined override (waiting by cancelling parts again) or Q returning
    /// early.
    @Test func combinedTokenCancelledInsideAPartWhileAnotherThreadCancelsIt() async {
        let c1 = StateContainer(0, key: "attack.cancelstate.c1.\(UUID().uuidString)")
        let c2 = StateContainer(0, key: "attack.cancelstate.c2.\(UUID().uuidString)")
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
            let waited = attackSpin(timeout: .seconds(60)) {
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
        #expect(await attackWait(for: entered))
        let insideWhenQReturned = Atomic<Bool>(false)
        let qDone = onAThreadOfItsOwn {
            qThread.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
            combined.cancel()
            insideWhenQReturned.store(inside.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
        }
        #expect(await attackWait(for: delivered), "the listener's own cancel of the combined token never returned")
        #expect(await attackWait(for: qDone), "the other thread's cancel never returned")
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
    /// override (cancelling the parts again).
    /// Mutant caught (verified): cancel() waiting only when its exchange set the flag (the code before 99dd7c0).
    @Test(arguments: [false, true]) func everyLaterCancelWaitsForTheHeldCall(combined: Bool) async {
        let c = StateContainer(0, key: "attack.cancelstate.many.\(UUID().uuidString)")
        let other = StateContainer(0, key: "attack.cancelstate.many.other.\(UUID().uuidString)")
        let held = AttackHeldCall()
        let part = c.observe { value in
            guard value == 1 else { return }
            held.call()
        }
        let token = combined ? SubscriptionToken.combining([part, other.observe { _ in }]) : part
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await attackWait(for: held.entered))
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
            attackSpin(timeout: .seconds(60)) {
                let waiting = threads.filter { t in
                    let id = t.id.load(ordering: .sequentiallyConsistent)
                    return id != 0 && CancelWaits.shared.isWaiting(id)
                }.count
                return waiting + returnedCount.load(ordering: .sequentiallyConsistent) >= 3
            }
        }
        #expect(allWaiting, "the cancels neither waited nor returned")
        held.letOut()
        for d in dones { #expect(await attackWait(for: d)) }
        #expect(await attackWait(for: delivered))
        let loaded4 = early.load(ordering: .sequentiallyConsistent)
        #expect(loaded4 == 0, "a cancel returned while the call ran")
    }

    /// The container's change-count reader: the count, `.busy` while the link's lock is held, `.ended` once the
    /// container is gone, and it never keeps the container alive.
    @Test func containerChangeCountReaderSaysCountBusyAndEnded() async {
        var container: StateContainer<Int>? = StateContainer(0, key: "attack.cancelstate.reader.\(UUID().uuidString)")
        let weak = AttackWeak(container)
        let reader = container!.changeCountReader()
        let link = container!.link
        #expect(reader() == .count(container!.changeCount))
        container!.modify(5)
        #expect(reader() == .count(container!.changeCount))
        // Held on another thread: busy, not ended and not a wait.
        let locked = DispatchSemaphore(value: 0)
        let unlock = DispatchSemaphore(value: 0)
        let holder = onAThreadOfItsOwn {
            link.state.withLock { _ in
                locked.signal()
                _ = unlock.wait(timeout: .now() + .seconds(attackPatience))
            }
        }
        #expect(await attackWait(for: locked))
        let whileHeld = await offThePool { reader() }
        unlock.signal()
        #expect(await attackWait(for: holder))
        #expect(whileHeld == .busy)
        container = nil
        #expect(weak.object == nil, "the reader kept the container alive")
        #expect(reader() == .ended)
    }

    /// A persisted container, following its storage's notifications while another thread notifies without pause,
    /// changed then let go on this thread: its change is stored once the let-go returns, its key is free, and a new
    /// container of the key made right after is no duplicate (the count is read through the link, so no check
    /// holds the container). Catches a reader that holds the container (d211413 reverted).
    @Test func persistedContainerLetGoWhileChecksReadItsCount() async {
        let outcome = await offThePool { () -> [String] in
            var problems: [String] = []
            let storage = NotifyingStorage(AttackMemoryStorage())
            let stop = Atomic<Bool>(false)
            let notifier = onAThreadOfItsOwn {
                while !stop.load(ordering: .relaxed) { storage.notify() }
            }
            for round in 0..<200 {
                let key = "attack.cancelstate.letgo.\(round).\(UUID().uuidString)"
                let reported = Recorder<StatehouseDiagnostic>()
                StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
                    var container: StateContainer<Int>? = StateContainer(
                        0, key: key, storage: storage, codec: .json, writes: .coalesced,
                        externalChanges: .watch(safetyNet: .milliseconds(1))
                    )
                    container!.modify(round + 1)
                    container = nil
                    let stored = (try? storage.base.load(key: key)).flatMap { String(data: $0, encoding: .utf8) }
                    if stored != "\(round + 1)" { problems.append("round \(round): stored \(stored ?? "nil")") }
                    if KeyRegistry.shared.isLive(key) { problems.append("round \(round): key still live") }
                    let again = StateContainer(0, key: key)
                    withExtendedLifetime(again) {}
                }
                let dups = reported.elements.filter { $0.kind == .duplicateKey && $0.key == key }.count
                if dups > 0 { problems.append("round \(round): \(dups) duplicate-key reports") }
            }
            stop.store(true, ordering: .relaxed)
            _ = notifier.wait(timeout: .now() + .seconds(attackPatience))
            return problems
        }
        #expect(outcome.isEmpty, "\(outcome.prefix(10))")
    }

    /// A listener that changes its own container from inside its call, then stays inside: if the nested change were
    /// delivered inline on the same thread, its invoke would clear `callingThread` while the outer call still runs,
    /// and a cancel on another thread would return with the call running.
    @Test func aListenerChangingItsOwnContainerInsideItsCallIsStillWaitedFor() async {
        let c = StateContainer(0, key: "attack.cancelstate.reentrant.\(UUID().uuidString)")
        let held = AttackHeldCall()
        let token = c.observe { value in
            guard value == 1 else { return }
            c.modify(2)
            held.call()
        }
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await attackWait(for: held.entered))
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
            attackSpin(timeout: .seconds(60)) {
                let id = q.id.load(ordering: .sequentiallyConsistent)
                return returned.load(ordering: .sequentiallyConsistent) || (id != 0 && CancelWaits.shared.isWaiting(id))
            }
        }
        held.letOut()
        #expect(await attackWait(for: qDone))
        #expect(await attackWait(for: delivered))
        let loaded6 = insideWhenReturned.load(ordering: .sequentiallyConsistent)
        #expect(!loaded6, "cancel() returned while the call ran")
    }

    /// Two parts of one combined token, each inside a call on its own thread, both cancel the combined token: each
    /// waits for the other part's call (the second through the override), a cycle the wait registry must break.
    /// Catches a deadlock that 99dd7c0 could add (before it, the second cancel returned at once).
    @Test func bothPartsOfACombinedTokenCancelItFromInsideTheirCalls() async {
        let c1 = StateContainer(0, key: "attack.cancelstate.both1.\(UUID().uuidString)")
        let c2 = StateContainer(0, key: "attack.cancelstate.both2.\(UUID().uuidString)")
        let box = TokenBox()
        let bothInside = DispatchSemaphore(value: 0)
        let count = Atomic<Int>(0)
        let listener: @Sendable (Int) -> Void = { value in
            guard value == 1 else { return }
            count.add(1, ordering: .sequentiallyConsistent)
            _ = attackSpin(timeout: .seconds(60)) { count.load(ordering: .sequentiallyConsistent) >= 2 }
            bothInside.signal()
            box.token?.cancel()
        }
        let t1 = c1.observe(listener)
        let t2 = c2.observe(listener)
        box.slot.withLock { $0 = SubscriptionToken.combining([t1, t2]) }
        let d1 = onAThreadOfItsOwn { c1.modify(1) }
        let d2 = onAThreadOfItsOwn { c2.modify(1) }
        #expect(await attackWait(for: bothInside, count: 2))
        #expect(await attackWait(for: d1), "a part's cancel of the combined token never returned")
        #expect(await attackWait(for: d2), "a part's cancel of the combined token never returned")
    }

    /// cancelWithoutWaiting() (an async stream's termination) racing cancel() on other threads: every cancel() whose
    /// exchange set the flag waits for the held call; nothing deadlocks; the listener is detached exactly once.
    @Test func cancelWithoutWaitingRacingCancelNeverDeadlocksAndTheWinnerWaits() async {
        for round in 0..<50 {
            let c = StateContainer(0, key: "attack.cancelstate.nowait.\(round).\(UUID().uuidString)")
            let entered = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let late = Atomic<Bool>(false)
            let token = c.observe { value in
                if value == 2 { late.store(true, ordering: .sequentiallyConsistent) }
                guard value == 1 else { return }
                entered.signal()
                _ = release.wait(timeout: .now() + .seconds(attackPatience))
            }
            let delivered = onAThreadOfItsOwn { c.modify(1) }
            #expect(await attackWait(for: entered))
            let go = DispatchSemaphore(value: 0)
            let a = onAThreadOfItsOwn { _ = go.wait(timeout: .now() + .seconds(attackPatience)); token.cancel() }
            let b = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience)); token.cancelWithoutWaiting()
            }
            go.signal(); go.signal()
            #expect(await attackWait(for: b), "cancelWithoutWaiting waited")
            release.signal()
            #expect(await attackWait(for: a))
            #expect(await attackWait(for: delivered))
            c.modify(2)
            let wasLate = late.load(ordering: .sequentiallyConsistent)
            #expect(!wasLate, "called after cancellation")
        }
    }

    /// A token let go (its last reference) from inside its own call while another thread's cancel() waits for that
    /// call: the deinit's cancel on the calling thread must not wait for itself, and the other cancel returns only
    /// after the call. A queued listener's token, which owns its registration: the other thread cancels that.
    @Test func aTokenLetGoInsideItsOwnCallWhileAnotherThreadCancelsIt() async throws {
        let c = StateContainer(0, key: "attack.cancelstate.selfrelease.\(UUID().uuidString)")
        let box = TokenBox()
        let q = ThreadSlot()
        let entered = DispatchSemaphore(value: 0)
        let inside = Atomic<Bool>(false)
        let token = c.observe(on: .queue(DispatchQueue(label: "attack.cancelstate.selfrelease"))) { value in
            guard value == 1 else { return }
            inside.store(true, ordering: .sequentiallyConsistent)
            entered.signal()
            _ = attackSpin(timeout: .seconds(60)) {
                let id = q.id.load(ordering: .sequentiallyConsistent)
                return id != 0 && CancelWaits.shared.isWaiting(id)
            }
            box.slot.withLock { $0 = nil }
            inside.store(false, ordering: .sequentiallyConsistent)
        }
        let subscription = try #require(token as? OwningToken).subscription
        box.slot.withLock { $0 = consume token }
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await attackWait(for: entered))
        let insideWhenReturned = Atomic<Bool>(false)
        let qDone = onAThreadOfItsOwn {
            q.id.store(currentThreadIdentity(), ordering: .sequentiallyConsistent)
            subscription.cancel()
            insideWhenReturned.store(inside.load(ordering: .sequentiallyConsistent), ordering: .sequentiallyConsistent)
        }
        #expect(await attackWait(for: delivered), "the token's deinit inside its own call never returned")
        #expect(await attackWait(for: qDone))
        let early = insideWhenReturned.load(ordering: .sequentiallyConsistent)
        #expect(!early, "cancel() returned while the call ran")
    }
}
