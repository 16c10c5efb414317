import Foundation
import StatehouseTestSupport
import Synchronization
import Testing
@testable import Statehouse

/// S9 attack on the idle fast path of `Store.dispatch`: one worker at a time, first in first out per caller, and
/// nested dispatches (from reducers, middleware, subscribers and effects) queued after the current action, whether
/// the action took the fast path or the queue.
@Suite(.serialized) struct AttackS9DispatchTests {
    enum Source: Int, Sendable { case caller, middleware, effect }

    struct Step: Sendable {
        var thread: Int
        var sequence: Int
        var source: Source
    }

    struct Tally: Equatable, Sendable {
        var applied = 0
    }

    /// Threads dispatch numbered actions; each caller's action makes the middleware dispatch one and a `.send`
    /// effect send one. The reducer must never run twice at once nor inside itself; each source's actions from one
    /// thread arrive in order; every action is applied once.
    @Test func concurrentReentrantDispatchStaysExclusiveAndInOrder() async {
        let threads = 4
        let perThread = 400
        let inside = Atomic<Int>(0)
        let overlaps = Atomic<Int>(0)
        let outOfOrder = Atomic<Int>(0)
        let middleware = Middleware<Tally, Step> { store, action, next in
            next(action)
            if action.source == .caller { store.dispatch(Step(thread: action.thread, sequence: action.sequence, source: .middleware)) }
        }
        // Last sequence seen per (thread, source): read and written only inside the reducer, which must be exclusive.
        let order = Locked([Int: Int]())
        let store = Store(initialState: Tally(), reducer: { (state: inout Tally, action: Step) -> Effect<Step> in
            if inside.add(1, ordering: .sequentiallyConsistent).newValue != 1 { overlaps.add(1, ordering: .relaxed) }
            defer { inside.subtract(1, ordering: .sequentiallyConsistent) }
            let slot = action.thread * 8 + action.source.rawValue
            let isInOrder = order.withLock { seen in
                defer { seen[slot] = action.sequence }
                return (seen[slot] ?? -1) < action.sequence
            }
            if !isInOrder { outOfOrder.add(1, ordering: .relaxed) }
            state.applied += 1
            guard action.source == .caller else { return .none }
            return .send(Step(thread: action.thread, sequence: action.sequence, source: .effect))
        }, middleware: [middleware])
        let token = store.subscribe(\.applied) { _ in }
        await onNewThreads(threads) { thread in
            for sequence in 0..<perThread {
                store.dispatch(Step(thread: thread, sequence: sequence, source: .caller))
            }
        }
        let expected = threads * perThread * 3  // caller, middleware, effect
        #expect(await eventually(timeout: .seconds(60)) { store.state.applied == expected })
        #expect(overlaps.load(ordering: .relaxed) == 0)
        #expect(outOfOrder.load(ordering: .relaxed) == 0)
        withExtendedLifetime(token) {}
    }

    /// A subscriber that dispatches: its action is applied after the current one, and every subscriber sees each
    /// state in order, whether the outer action took the idle path or waited in the queue.
    @Test func subscribersThatDispatchSeeStatesInOrderUnderThreads() async {
        let store = Store(initialState: 0) { (state: inout Int, action: Int) in state += action }
        let seen = Locked([Int]())
        let backwards = Atomic<Int>(0)
        let token = store.subscribe { (value: Int) in
            let wentBack = seen.withLock { values -> Bool in
                defer { values.append(value) }
                return (values.last ?? -1) >= value
            }
            if wentBack { backwards.add(1, ordering: .relaxed) }
            // Re-entrant: every tenth state asks for one more, which lands after this delivery.
            if value % 10 == 0, value > 0 { store.dispatch(1) }
        }
        await onNewThreads(4) { _ in
            for _ in 0..<300 { store.dispatch(1) }
        }
        // The callers may have left the rest to a background thread: wait until the store is idle at the end.
        #expect(await eventually(timeout: .seconds(60)) {
            store.state >= 1_200 && store.inbox.isIdle && seen.withLock { $0.last } == store.state
        })
        #expect(backwards.load(ordering: .relaxed) == 0)
        withExtendedLifetime(token) {}
    }
}
