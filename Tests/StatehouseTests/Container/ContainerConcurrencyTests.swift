import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Many threads, many iterations. Serialized: each test keeps eight threads busy; side by side, they would only
/// slow one another down on a two-core machine.
@Suite("StateContainer under concurrency", .serialized)
struct ContainerConcurrencyTests {
    static let threads = 8
    static let increments = 5_000

    @Test func updatesFromEightThreadsLoseNothing() async {
        let count = StateContainer(0, key: "concurrency.update")
        await onNewThreads(Self.threads) { _ in
            for _ in 0..<Self.increments { count.update { $0 += 1 } }
        }
        #expect(count.value == Self.threads * Self.increments)
    }

    @Test func updatesLoseNothingWhileListenersRunAndModify() async {
        // Listeners of every kind run during the updates: one mirrors the value into another container, one adds
        // to this container from inside its own call at every thousandth value.
        let count = StateContainer(0, key: "concurrency.updateWithListeners")
        let mirror = StateContainer(0, key: "concurrency.mirror")
        let queue = DispatchQueue(label: "test.listeners")
        let reentrantAdds = Atomic<Int>(0)
        let queuedCalls = Atomic<Int>(0)
        let tokens = [
            count.observe { mirror.modify($0) },
            count.observe { value in
                if value % 1_000 == 0 {
                    reentrantAdds.add(1, ordering: .relaxed)
                    count.update { $0 += 1 }
                }
            },
            count.observe(on: .queue(queue)) { _ in queuedCalls.add(1, ordering: .relaxed) },
        ]
        await onNewThreads(Self.threads) { _ in
            for _ in 0..<Self.increments { count.update { $0 += 1 } }
        }
        // Changes that queue up are coalesced, and a background thread may still be delivering the last ones. Wait
        // for the end, not for the mirror alone: it is told before the listener that adds, so it can equal a
        // thousandth value whose add is still to come. The last value is always delivered, and a delivered
        // thousandth value gets one more add, so the end is the first moment the value is not a thousandth one
        // and holds every add.
        #expect(await eventually {
            let value = count.value
            return mirror.value == value && !value.isMultiple(of: 1_000)
                && value == Self.threads * Self.increments + reentrantAdds.load(ordering: .relaxed)
        })
        let expected = Self.threads * Self.increments + reentrantAdds.load(ordering: .relaxed)
        #expect(count.value == expected)
        #expect(mirror.value == expected)
        withExtendedLifetime(tokens) {}
    }

    @Test func listenerNeverReadsAnOlderValueThanItWasCalledFor() async {
        let count = StateContainer(0, key: "concurrency.newValue")
        let stale = Atomic<Int>(0)
        let token = count.observe { delivered in
            if count.value < delivered { stale.add(1, ordering: .relaxed) }
        }
        await onNewThreads(4) { _ in
            for _ in 0..<20_000 { count.update { $0 += 1 } }
        }
        #expect(stale.load(ordering: .relaxed) == 0)
        token.cancel()
    }

    @Test(arguments: [false, true])
    func eachListenerReceivesChangesInOrderEndingWithTheLast(queued: Bool) async {
        let count = StateContainer(0, key: "concurrency.order.\(queued)")
        let queue = DispatchQueue(label: "test.order", attributes: .concurrent)
        let recorders = (0..<3).map { _ in Recorder<Int>() }
        let tokens = recorders.map { recorder in
            count.observe(on: queued ? .queue(queue) : .synchronous) { recorder.append($0) }
        }
        await onNewThreads(4) { _ in
            for _ in 0..<10_000 { count.update { $0 += 1 } }
        }
        let total = 40_000
        for recorder in recorders {
            #expect(await eventually { recorder.elements.last == total })
            // update increments, so change k carries the value k: in order and without duplicates means strictly
            // increasing. Values may be skipped: changes that queue up behind one another are coalesced.
            let elements = recorder.elements
            #expect(zip(elements, elements.dropFirst()).allSatisfy { $0 < $1 })
        }
        withExtendedLifetime(tokens) {}
    }

    @Test func listenerThatModifiesTheContainerSeesEveryChangeOnceInOrder() {
        let count = StateContainer(0, key: "concurrency.reentrant")
        let first = Recorder<Int>()
        let second = Recorder<Int>()
        let tokens = [
            count.observe { value in
                first.append(value)
                if value < 10 { count.modify(value + 1) }
            },
            count.observe { second.append($0) },
        ]
        count.modify(1)
        #expect(first.elements == Array(1...10))
        #expect(second.elements == Array(1...10))
        #expect(count.value == 10)
        withExtendedLifetime(tokens) {}
    }

    @Test func reentrantChangesFromManyThreadsStayOrderedPerListener() async {
        // Four threads add 1 at a time, and the listener adds 1 from inside its call at every multiple of 3. Every
        // change adds 1, so change k carries the value k: the listener must see strictly increasing values (changes
        // that queue up are coalesced, so some may be skipped), ending with the last.
        let count = StateContainer(0, key: "concurrency.reentrantThreads")
        let seen = Recorder<Int>()
        let token = count.observe { value in
            seen.append(value)
            if value % 3 == 0 { count.update { $0 += 1 } }
        }
        await onNewThreads(4) { _ in
            for _ in 0..<2_500 { count.update { $0 += 1 } }
        }
        #expect(count.value >= 10_000)
        #expect(await eventually { seen.elements.last == count.value })
        let elements = seen.elements
        #expect(zip(elements, elements.dropFirst()).allSatisfy { $0 < $1 })
        token.cancel()
    }

    @Test func noCallStartsAfterCancelReturnsOnAnotherThread() async {
        for iteration in 0..<200 {
            let count = StateContainer(0, key: "concurrency.cancel.\(iteration)")
            let cancelled = Atomic<Bool>(false)
            let lateCalls = Atomic<Int>(0)
            let token = count.observe { _ in
                if cancelled.load(ordering: .sequentiallyConsistent) { lateCalls.add(1, ordering: .relaxed) }
            }
            await onNewThreads(3) { thread in
                if thread == 0 {
                    for _ in 0..<50 { count.update { $0 += 1 } }
                    token.cancel()
                    cancelled.store(true, ordering: .sequentiallyConsistent)
                } else {
                    for _ in 0..<200 { count.update { $0 += 1 } }
                }
            }
            #expect(lateCalls.load(ordering: .relaxed) == 0, "iteration \(iteration)")
        }
    }

    @Test func listenerMayCancelItselfFromInsideItsCall() {
        let count = StateContainer(0, key: "concurrency.selfCancel")
        let calls = Atomic<Int>(0)
        let holder = Locked<SubscriptionToken?>(nil)
        holder.withLock { slot in
            slot = count.observe { _ in
                calls.add(1, ordering: .relaxed)
                holder.withLock { $0 }?.cancel()
            }
        }
        count.modify(1)
        count.modify(2)
        #expect(calls.load(ordering: .relaxed) == 1)
    }

    @Test func subscribingAndCancellingFromManyThreadsKeepsTheTableConsistent() async {
        let count = StateContainer(0, key: "concurrency.churn")
        // Fewer under ThreadSanitizer, which slows every access tenfold: the same windows, fewer tries.
        let perThread = isUnderThreadSanitizer ? 1_500 : 5_000
        await onNewThreads(Self.threads) { _ in
            for _ in 0..<perThread {
                let token = count.observe(initial: true) { _ in }
                count.update { $0 += 1 }
                token.cancel()
            }
        }
        #expect(count.locked { $0.observers.isEmpty })
        #expect(count.value == Self.threads * perThread)
    }
}
