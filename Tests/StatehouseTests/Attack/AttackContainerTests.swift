import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// An attached listener whose first call blocks (see ``AttackCancelProbe``), on a queue of its own.
private final class AttackBlockingListener: StateListener, Sendable {
    let probe = AttackCancelProbe()
    let queue = DispatchQueue(label: "attack.blockingListener")

    var stateListenerQueue: DispatchQueue { queue }

    func stateModified<T>(_ state: StateContainer<T>) {
        probe.call()
    }
}

@Suite("Attack: containers under contention (issue 10)", .serialized)
struct AttackContainerTests {
    // MARK: Defect 3

    // Issue 10, defect 3: with a `.queue` call running and one more change enqueued, `cancel()` returned at once.
    @Test func cancelWaitsForAQueuedCallThatIsRunningWhenAnotherChangeIsEnqueued() async {
        for round in 0..<3 {
            let count = StateContainer(0, key: "attack.cancelQueued.container.\(round)")
            let probe = AttackCancelProbe()
            let token = count.observe(on: .queue(DispatchQueue(label: "attack.cancelQueued"))) { _ in probe.call() }
            count.modify(1)
            #expect(await attackWait(for: probe.entered), "round \(round): the queued call never started")
            // While the first call runs on the queue, this thread delivers the next change: it only enqueues it,
            // and must not make cancel() believe that no call is running.
            count.modify(2)
            let callEnded = await probe.cancel { token.cancel() }
            #expect(callEnded, "round \(round): cancel() returned while the listener was still running")
        }
    }

    // Issue 10, defect 3: the same for an attached StateListener; `detach(listener:)` is its cancel.
    @Test func detachWaitsForAnAttachedListenerCallThatIsRunningWhenAnotherChangeIsEnqueued() async {
        for round in 0..<3 {
            let count = StateContainer(0, key: "attack.cancelQueued.attached.\(round)")
            let listener = AttackBlockingListener()
            count.attach(listener: listener)
            count.modify(1)
            #expect(await attackWait(for: listener.probe.entered), "round \(round): the listener was never called")
            count.modify(2)
            let callEnded = await listener.probe.cancel { count.detach(listener: listener) }
            #expect(callEnded, "round \(round): detach returned while the listener was still running")
        }
    }

    // MARK: Defect 5

    // Issue 10, defect 5: whoever found the container idle delivered every change other threads queued meanwhile.
    @Test func aChangingCallDeliversAtMostABoundedShareOfOtherThreadsChanges() async {
        // The caller's change finds the container idle, so the caller delivers it. Its listener's first call (on the
        // caller's thread) starts three writers and holds the caller until they made 100 changes, which queue up
        // behind it. Then the caller may deliver its own change plus at most 16 rounds of the others' (coalesced
        // or not); the rest goes to a background thread. Every change adds 1, so the last value is known.
        await duringThreadStorm {
            let count = StateContainer(0, key: "attack.bounded.container")
            let writers = 3
            let perWriter = 2_000
            let caller = AttackCallerThread()
            let callsOnCaller = AttackCounter()
            let written = AttackCounter()
            let writersDone = DispatchSemaphore(value: 0)
            let seen = Recorder<Int>()
            let token = count.observe { value in
                seen.append(value)
                guard caller.isCurrent, callsOnCaller.increment() == 1 else { return }
                for _ in 0..<writers {
                    Thread.detachNewThread {
                        for _ in 0..<perWriter {
                            count.update { $0 += 1 }
                            written.increment()
                        }
                        writersDone.signal()
                    }
                }
                attackSpin { written.value >= 100 }
            }
            let calls = await offThePool { () -> Int in
                caller.setToCurrent()
                count.update { $0 += 1 }
                caller.clear()
                return callsOnCaller.value
            }
            #expect(calls >= 1)
            #expect(calls <= 17, "one update delivered \(calls) rounds on its caller's thread")
            #expect(await attackWait(for: writersDone, count: writers))
            let last = 1 + writers * perWriter
            #expect(await eventually { seen.elements.last == last }, "the listener never got the last value")
            #expect(count.value == last)
            let values = seen.elements
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "out of order or duplicated")
            token.cancel()
        }
    }
}
