import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// No caller of `modify`, `update` or `dispatch` is held for other threads' work without bound: whoever finds the
/// container or store idle does its own work and at most a bounded share of what others queued meanwhile. And memory
/// does not grow with what was delivered: groups of key paths nobody subscribes to any more go, a slow `values` loop
/// can keep only the newest value.
@Suite("Bounded: no caller is held for others' work without bound, and memory does not grow", .serialized)
struct BoundedTests {
    /// A change that finds the container idle delivers its own change and at most a bounded share (16 rounds) of the
    /// changes other threads queued behind it; a background thread delivers the rest, in order, up to the last.
    @Test func aChangingCallDeliversAtMostABoundedShareOfOtherThreadsChanges() async {
        // The caller's change finds the container idle, so the caller delivers it. Its listener's first call (on the
        // caller's thread) starts three writers and holds the caller until they made 100 changes, which queue up
        // behind it. Then the caller may deliver its own change plus at most 16 rounds of the others' (coalesced
        // or not); the rest goes to a background thread. Every change adds 1, so the last value is known.
        await duringThreadStorm {
            let count = StateContainer(0, key: "bounded.container")
            let writers = 3
            let perWriter = 2_000
            let caller = CallerThread()
            let callsOnCaller = SharedCounter()
            let written = SharedCounter()
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
                spinWait { written.value >= 100 }
            }
            let calls = await offThePool { () -> Int in
                caller.setToCurrent()
                count.update { $0 += 1 }
                caller.clear()
                return callsOnCaller.value
            }
            #expect(calls >= 1)
            #expect(calls <= 17, "one update delivered \(calls) rounds on its caller's thread")
            #expect(await waitOffThePool(for: writersDone, count: writers))
            let last = 1 + writers * perWriter
            #expect(await eventually { seen.elements.last == last }, "the listener never got the last value")
            #expect(count.value == last)
            let values = seen.elements
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 < $1 }, "out of order or duplicated")
            token.cancel()
        }
    }

    /// A dispatch that finds the store idle applies its own action and at most 16 of the actions other threads
    /// queued behind it; the waiting callers take turns with the rest, each applied exactly once.
    @Test func aDispatchProcessesAtMostABoundedShareOfOtherThreadsActions() async {
        // The caller's action finds the store idle. Its subscriber (on the caller's thread) starts three threads
        // dispatching and holds the caller until each has queued an action (each waits for it: no more can queue).
        // Then the caller may reduce its own action plus at most 16 of the others'; the waiting callers take turns
        // with the rest, each exactly once.
        await duringThreadStorm {
            let dispatchers = 3
            let perDispatcher = 1_000
            let caller = CallerThread()
            let reducedOnCaller = SharedCounter()
            let store = Store(initialState: Counter()) { (state: inout Counter, action: CounterAction) -> Void in
                if caller.isCurrent { reducedOnCaller.increment() }
                counterReducer(&state, action)
            }
            let dispatched = SharedCounter()
            let dispatchersDone = DispatchSemaphore(value: 0)
            let held = SharedFlag()
            let token = store.subscribe(\.count, initial: false) { _ in
                guard caller.isCurrent, !held.set() else { return }
                for _ in 0..<dispatchers {
                    Thread.detachNewThread {
                        for _ in 0..<perDispatcher {
                            store.dispatch(.increment)
                            dispatched.increment()
                        }
                        dispatchersDone.signal()
                    }
                }
                spinWait { store.inbox.turns.withLock { $0.queue.count } == dispatchers }
            }
            let reduced = await offThePool { () -> Int in
                caller.setToCurrent()
                store.dispatch(.increment)
                caller.clear()
                return reducedOnCaller.value
            }
            #expect(reduced >= 1)
            #expect(reduced <= 17, "one dispatch reduced \(reduced) actions on its caller's thread")
            #expect(await waitOffThePool(for: dispatchersDone, count: dispatchers))
            let total = 1 + dispatchers * perDispatcher
            #expect(await eventually { store.state.count >= total }, "count \(store.state.count) of \(total)")
            #expect(store.state.count == total, "an action was applied twice")
            token.cancel()
        }
    }

    /// One caller dispatches, one action at a time, while three threads flood the store. During each of its calls it
    /// may apply its own action and at most `shareForOthers` (16) of the others' before a background thread takes
    /// over. Counted by the reducer: an action from another thread applied on the measuring thread while it is
    /// inside `dispatch`.
    @Test func aLockFreeWorkerIsHeldForAtMostItsShare() async {
        let floodThreads = 3
        let perFlood = 20_000
        let measured = 3_000
        let measuringThread = Atomic<UInt>(0)
        let othersDuringCall = Atomic<Int>(0)
        let store = Store(initialState: 0) { (state: inout Int, action: NumberedStep) in
            state += 1
            if action.source != 0, currentThreadIdentity() == measuringThread.load(ordering: .relaxed) {
                othersDuringCall.add(1, ordering: .relaxed)
            }
        }
        let worst = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        await onNewThreads(floodThreads + 1) { thread in
            if thread == 0 {
                measuringThread.store(currentThreadIdentity(), ordering: .relaxed)
                for sequence in 0..<measured {
                    othersDuringCall.store(0, ordering: .relaxed)
                    store.dispatch(NumberedStep(source: 0, sequence: sequence))
                    let count = othersDuringCall.load(ordering: .relaxed)
                    if count > worst.load(ordering: .relaxed) { worst.store(count, ordering: .relaxed) }
                }
                stop.store(true, ordering: .relaxed)
            } else {
                var sequence = 0
                while sequence < perFlood || !stop.load(ordering: .relaxed) {
                    store.dispatch(NumberedStep(source: thread * 2, sequence: sequence))
                    sequence += 1
                }
            }
        }
        #expect(await eventually(timeout: .seconds(120)) { store.inbox.isIdle })
        print("Inbox worst share:", worst.load(ordering: .relaxed))
        #expect(worst.load(ordering: .relaxed) <= 16, "a caller was held for more than its share of others' work")
    }

    /// Key paths are values: a list subscribing to `\.[row]` for each row it shows makes a group per row. A group
    /// nobody subscribes to any more goes (at most a few empty ones are kept), instead of one per row ever shown,
    /// each holding its last selection, walked by every dispatch.
    @Test func groupsOfKeyPathsNobodySubscribesToAnyMoreAreLetGo() {
        let store = Store(initialState: Array(repeating: 0, count: 1_000)) { (rows: inout [Int], row: Int) in
            rows[row] += 1
        }
        let kept = store.subscribe(\.[0]) { _ in }
        for row in 1..<1_000 {
            store.subscribe(\.[row]) { _ in }.cancel()
        }
        let (groups, keyed) = store.core.withLock { ($0.groups.count, $0.groupsByKey.count) }
        #expect(groups <= 40, "\(groups) group slots for 1 subscriber")
        #expect(keyed <= 40, "\(keyed) key-path groups kept for 1 subscriber")
        // One of them again: a group is made anew, and the subscriber hears of changes.
        store.dispatch(500)
        let values = Recorder<Int>()
        let again = store.subscribe(\.[500]) { values.append($0) }
        store.dispatch(500)
        store.dispatch(0)
        #expect(values.elements == [1, 2])
        withExtendedLifetime((kept, again)) {}
    }

    /// A thousand subscribers made and cancelled at once leave no more than 64 group slots behind, and the next
    /// subscriber hears its changes.
    @Test func aBurstOfSubscribersLeavesNoGroupSlotsBehind() {
        let store = makeCounterStore()
        let tokens = (0..<1_000).map { index in
            index.isMultiple(of: 2)
                ? store.subscribe(select: { $0.count + index }, isDuplicate: ==) { _ in }
                : store.subscribe(\.name) { _ in }
        }
        tokens.forEach { $0.cancel() }
        #expect(store.core.withLock { $0.groups.count } <= 64)
        let counts = Recorder<Int>()
        let token = store.subscribe(\.count) { counts.append($0) }
        store.dispatch(.increment)
        #expect(counts.elements == [0, 1])
        token.cancel()
    }

    /// `values(bufferingPolicy: .bufferingNewest(1))`, the bounded alternative to `values`: a slow loop gets the
    /// current value, then only the newest.
    @Test func bufferingNewestOneGivesTheCurrentValueThenOnlyTheNewest() async {
        let count = StateContainer(0, key: "values.newest")
        var iterator = count.values(bufferingPolicy: .bufferingNewest(1)).makeAsyncIterator()
        #expect(await iterator.next() == 0)
        for value in 1...10 { count.modify(value) }
        #expect(await iterator.next() == 10)
        count.modify(11)
        #expect(await iterator.next() == 11)
    }
}
