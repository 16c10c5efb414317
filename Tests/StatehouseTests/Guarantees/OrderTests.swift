import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Tells the flooding thread to stop, and how many actions it dispatched.
private final class FloodFlags: Sendable {
    let stop = Atomic<Bool>(false)
    let flooded = Atomic<Int>(0)
}

/// Actions from many threads, handed from one worker to the next, in every way the store's inbox takes them: each
/// source's actions are applied in order, once each, and every subscriber's values only go forward.
@Suite("Order: changes reach each subscriber in the order they happened, once each", .serialized)
struct OrderTests {
    /// Written only by the reducer, with no lock of its own: the store's one-worker rule, and the happens-before
    /// between one worker's give-back and the next one's claim, are all that protect it. Under ThreadSanitizer, a
    /// missing acquire/release between workers is reported here.
    // @unchecked on purpose: this state has no lock, and is safe only if the store runs one reducer at a time, each
    // worker's writes visible to the next (what the test checks, and ThreadSanitizer with it). The test thread reads
    // it only after a dispatch of its own has claimed the idle store, which orders it after every earlier worker.
    final class Unguarded: @unchecked Sendable {
        var applied = 0
        var lastPerSource: [Int] = Array(repeating: -1, count: 64)
        var outOfOrder = 0
    }

    /// Threads dispatch; each action's `.send` effect echoes it; a key-path subscriber reads its selection (the
    /// `LastSelection` read without the state lock). Reducer state is an unguarded class: each source's actions
    /// reach it in order, one reducer at a time, and the subscriber never sees the state go back.
    @Test func unguardedReducerStateIsHandedFromWorkerToWorker() async {
        let threads = 4
        let perThread = 5_000
        let box = Unguarded()
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let store = Store(initialState: 0, reducer: { (state: inout Int, action: NumberedStep) -> Effect<NumberedStep> in
            if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
            defer { inside.subtract(1, ordering: .sequentiallyConsistent) }
            if box.lastPerSource[action.source] >= action.sequence { box.outOfOrder += 1 }
            box.lastPerSource[action.source] = action.sequence
            box.applied += 1
            state += 1
            guard action.source % 2 == 0 else { return .none }
            return .send(NumberedStep(source: action.source + 1, sequence: action.sequence))
        })
        let seenBackwards = Atomic<Int>(0)
        let last = Atomic<Int>(-1)
        let token = store.subscribe(\.self) { (value: Int) in
            if last.exchange(value, ordering: .relaxed) >= value { seenBackwards.add(1, ordering: .relaxed) }
        }
        await onNewThreads(threads) { thread in
            for sequence in 0..<perThread { store.dispatch(NumberedStep(source: thread * 2, sequence: sequence)) }
        }
        let expected = threads * perThread * 2
        #expect(await eventually(timeout: .seconds(120)) { store.state == expected && store.inbox.isIdle })
        await store.finishEffects()
        // Read through the store's lock and inbox: nothing runs any more.
        store.dispatch(NumberedStep(source: 63, sequence: 0))
        let (applied, outOfOrder) = (box.applied, box.outOfOrder)
        #expect(applied == expected + 1)
        #expect(outOfOrder == 0)
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(seenBackwards.load(ordering: .relaxed) == 0)
        withExtendedLifetime(token) {}
    }

    /// Short-lived threads, so that thread identities (pthread_self) are reused, dispatch while a flood keeps the
    /// store busy and handing off. Every action applied once, each thread's in order, and nothing left queued.
    @Test func reusedThreadIdentitiesLoseNothing() async {
        let waves = 200
        let perWave = 4
        let perThread = 25
        let applied = Atomic<Int>(0)
        let order = Locked([Int: Int]())
        let outOfOrder = Atomic<Int>(0)
        let store = Store(initialState: 0) { (state: inout Int, action: NumberedStep) in
            state += 1
            applied.add(1, ordering: .relaxed)
            let isInOrder = order.withLock { seen in
                defer { seen[action.source] = action.sequence }
                return (seen[action.source] ?? -1) < action.sequence
            }
            if !isInOrder { outOfOrder.add(1, ordering: .relaxed) }
        }
        let flags = FloodFlags()
        // One storm turn for the flood and the waves (nested turns would wait for each other).
        await duringThreadStorm {
        async let flood: Void = offThePool {
            var sequence = 0
            while !flags.stop.load(ordering: .relaxed) {
                store.dispatch(NumberedStep(source: -1, sequence: sequence))
                sequence += 1
            }
            flags.flooded.store(sequence, ordering: .relaxed)
        }
        for wave in 0..<waves {
            await onNewThreads(perWave) { thread in
                for sequence in 0..<perThread {
                    store.dispatch(NumberedStep(source: wave * perWave + thread, sequence: sequence))
                }
            }
        }
        flags.stop.store(true, ordering: .relaxed)
        await flood
        }
        let expected = waves * perWave * perThread + flags.flooded.load(ordering: .relaxed)
        #expect(await eventually(timeout: .seconds(120)) { applied.load(ordering: .relaxed) == expected && store.inbox.isIdle })
        #expect(applied.load(ordering: .relaxed) == expected)
        #expect(outOfOrder.load(ordering: .relaxed) == 0)
    }

    struct Parent: Equatable, Sendable {
        var child = 0
        var other = 0
    }

    enum ParentAction: Sendable {
        case child(Int)
        case other
    }

    /// A scope's dispatches and subscriptions go through the parent's inbox; scope subscribers dispatch to the scope
    /// (nested) and to the parent. Every action is applied once; each subscriber sees values in order.
    @Test func scopedStoresShareTheParentsInboxUnderThreads() async {
        let parent = Store(initialState: Parent()) { (state: inout Parent, action: ParentAction) in
            switch action {
            case .child(let amount): state.child += amount
            case .other: state.other += 1
            }
        }
        let child = parent.scope(state: \.child, action: ParentAction.child)
        let backwards = Atomic<Int>(0)
        let last = Atomic<Int>(-1)
        let echoes = Atomic<Int>(0)
        let token = child.subscribe(\.self) { (value: Int) in
            if last.exchange(value, ordering: .relaxed) >= value { backwards.add(1, ordering: .relaxed) }
            if value % 50 == 0, value > 0 {
                echoes.add(1, ordering: .relaxed)
                parent.dispatch(.other)
            }
        }
        let threads = 4
        let perThread = 3_000
        await onNewThreads(threads) { thread in
            for _ in 0..<perThread {
                if thread % 2 == 0 { child.dispatch(1) } else { parent.dispatch(.child(1)) }
            }
        }
        #expect(await eventually(timeout: .seconds(120)) {
            parent.state.child == threads * perThread && parent.state.other == echoes.load(ordering: .relaxed)
                && parent.inbox.isIdle
        })
        #expect(backwards.load(ordering: .relaxed) == 0)
        #expect(last.load(ordering: .relaxed) == threads * perThread)
        withExtendedLifetime(token) {}
    }

    /// Subscribing (the store's `run` path, claimed lock-free when idle) races dispatches: each new subscriber's
    /// values only go forward.
    @Test func subscribingWhileDispatchingSeesEveryLaterState() async {
        let store = Store(initialState: 0) { (state: inout Int, action: Int) in state += action }
        let threads = 4
        let perThread = 400
        let gaps = Atomic<Int>(0)
        let tokens = Locked([SubscriptionToken]())
        await onNewThreads(threads) { thread in
            for index in 0..<perThread {
                if thread == 0 && index % 4 == 0 {
                    let previous = Locked(-1)
                    let token = store.subscribe(\.self) { (value: Int) in
                        let gap = previous.withLock { previous in
                            defer { previous = value }
                            return value <= previous
                        }
                        if gap { gaps.add(1, ordering: .relaxed) }
                    }
                    tokens.withLock { $0.append(token) }
                } else {
                    store.dispatch(1)
                }
            }
        }
        #expect(await eventually(timeout: .seconds(120)) { store.inbox.isIdle })
        #expect(gaps.load(ordering: .relaxed) == 0)
        tokens.withLock { $0.removeAll() }
    }

    /// `initial: true` while another thread is delivering: the initial call comes once, after that round, and the
    /// changes after it once each.
    @Test func initialWhileAnotherThreadDelivers() async {
        let container = StateContainer(0, key: uniqueKey("order.consuming.initial.busy"))
        let (blocker, entered, release) = listenerHeldAtOne(container)
        let changed = onAThreadOfItsOwn { container.modify(1) }
        #expect(await waitOffThePool(for: entered))
        let heard = Recorder<Int>()
        let token = container.observe(initial: true) { heard.append($0) }
        #expect(heard.elements.isEmpty, "the initial value came while another thread delivered")
        release.signal()
        #expect(await waitOffThePool(for: changed))
        container.modify(2)
        #expect(heard.elements == [1, 2])
        token.cancel()
        blocker.cancel()
    }
}
