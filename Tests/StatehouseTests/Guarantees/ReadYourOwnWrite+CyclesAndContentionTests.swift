import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// "Read your own write" where it is hardest to keep: stores whose subscribers dispatch to one another (the wait
/// that would close a cycle is not made, and no other wait is taken for one), scoped and persisted stores, time
/// travel and `send` under contention. Each test hammers a window where a `dispatch` from outside a store's work could
/// return before its action is applied, or deadlock.
@Suite("Read your own write: cycles of stores and contention", .serialized)
struct ReadYourOwnWriteCyclesAndContentionTests {
    /// A store's state: how often each action was applied, and the last one.
    struct Log: Equatable, Sendable, Codable {
        var counts: [String: Int] = [:]
        var last = ""
    }

    static func logStore() -> Store<Log, String> {
        Store(initialState: Log()) { (state: inout Log, action: String) -> Effect<String> in
            state.counts[action, default: 0] += 1
            state.last = action
            return .none
        }
    }

    static func busyFor(microseconds: Int) {
        ReadYourOwnWriteTests.busyFor(microseconds: microseconds)
    }

    /// Spins (yielding) until `condition` holds or `seconds` pass; for the store's own threads, which must not await.
    @discardableResult
    static func spin(seconds: Double = 60, until condition: () -> Bool) -> Bool {
        let end = ContinuousClock.now + .milliseconds(Int(seconds * 1_000))
        while ContinuousClock.now < end {
            if condition() { return true }
            sched_yield()
        }
        return condition()
    }

    /// Runs `body(0)`, …, `body(count - 1)` on threads of their own; returns whether all returned within `timeout`
    /// (a deadlock leaves the threads blocked and the test fails instead of hanging).
    static func onDetachedThreads(
        _ count: Int, timeout: Duration = .seconds(120), _ body: @escaping @Sendable (Int) -> Void
    ) async -> Bool {
        let finished = Arc()
        for thread in 0..<count {
            Thread.detachNewThread {
                body(thread)
                finished.count.add(1, ordering: .releasing)
            }
        }
        return await eventually(timeout: timeout) { finished.count.load(ordering: .acquiring) == count }
    }

    final class Arc: Sendable {
        let count = Atomic<Int>(0)
    }

    // MARK: - WaitGraph: a caller whose wait has ended is still registered as blocked

    /// Thread X, store S's worker, dispatches to store A from S's subscriber and blocks: A's worker W is busy. W
    /// applies X's action, ends X's wait, and returns; then W dispatches to A again and, from A's subscriber, to S.
    /// S's worker is X, which is no longer waiting — but until X's thread wakes and unregisters, the wait graph
    /// still says X waits for A, whose worker is W: a "cycle" that does not exist. W's dispatch to S then only
    /// queues its action and returns before it is applied, although W is outside S's work and nothing would
    /// deadlock if it waited.
    @Test func aCallerWhoseWaitEndedIsNotTakenForACycle() async {
        let iterations = 200
        let a = Self.logStore()
        let s = Self.logStore()
        let iteration = Atomic<Int>(0)
        let wInSlow = Atomic<Int>(0)
        let misses = Atomic<Int>(0)
        let stillQueued = Atomic<Int>(0)
        let tokenA = a.subscribe { (log: Log) in
            switch log.last {
            case "slow":
                wInSlow.store(log.counts["slow"] ?? 0, ordering: .releasing)
                // Hold A until X's action is queued behind this one, then a little longer, so X parks.
                Self.spin { a.inbox.turns.withLock { $0.queue.count } >= 1 }
                Self.busyFor(microseconds: 300)
            case "probe":
                let expected = (s.state.counts["mark"] ?? 0) + 1
                s.dispatch("mark")
                if s.state.counts["mark"] ?? 0 != expected {
                    misses.add(1, ordering: .relaxed)
                    // Still queued on S: the dispatch did not wait at all.
                    if s.inbox.turns.withLock({ $0.queue.count }) > 0 { stillQueued.add(1, ordering: .relaxed) }
                }
            default:
                break
            }
        }
        let tokenS = s.subscribe { (log: Log) in
            if log.last == "go" { a.dispatch("fromS") }
        }
        for number in 1...iterations {
            iteration.store(number, ordering: .releasing)
            let done = await Self.onDetachedThreads(2) { thread in
                if thread == 0 {
                    a.dispatch("slow")
                    a.dispatch("probe")
                } else {
                    Self.spin { wInSlow.load(ordering: .acquiring) == number }
                    s.dispatch("go")
                }
            }
            #expect(done, "iteration \(number) did not finish")
            if !done { break }
        }
        #expect(
            misses.load(ordering: .relaxed) == 0,
            "\(misses.load(ordering: .relaxed)) of \(iterations) dispatches to S from outside its work returned before their action was applied (\(stillQueued.load(ordering: .relaxed)) with it still queued)"
        )
        tokenA.cancel()
        tokenS.cancel()
    }

    // MARK: - Cycles of three stores

    /// A's worker dispatches to B, B's to C, C's to A, all at once: the last to register its wait must see the cycle
    /// and queue instead; everything is applied once every dispatch returned.
    @Test func threeStoresDispatchingInACycleDoNotDeadlock() async {
        let stores = [Self.logStore(), Self.logStore(), Self.logStore()]
        let arrived = Atomic<Int>(0)
        let tokens = (0..<3).map { index in
            stores[index].subscribe { (log: Log) in
                guard log.last == "go" else { return }
                arrived.add(1, ordering: .relaxed)
                Self.spin { arrived.load(ordering: .relaxed) % 3 == 0 }
                stores[(index + 1) % 3].dispatch("hop")
            }
        }
        for round in 1...50 {
            let done = await Self.onDetachedThreads(3) { thread in
                stores[thread].dispatch("go")
            }
            #expect(done, "round \(round): the three stores deadlocked")
            if !done { break }
            for store in stores {
                #expect(store.state.counts["hop"] == round && store.state.counts["go"] == round)
            }
        }
        tokens.forEach { $0.cancel() }
    }

    // MARK: - Contention: scoped stores, persisted stores, time travel, async send

    struct Parent: Equatable, Sendable, Codable {
        var counts = [Int](repeating: 0, count: 4)
        var child = [Int](repeating: 0, count: 4)
    }

    enum ParentAction: Sendable {
        case add(Int)
        case child(Int)
    }

    static func parentReducer(_ state: inout Parent, _ action: ParentAction) -> Effect<ParentAction> {
        switch action {
        case .add(let thread): state.counts[thread] += 1
        case .child(let thread): state.child[thread] += 1
        }
        return .none
    }

    /// Scoped stores dispatching, subscribing and cancelling, with a re-entrant parent subscriber, from 4 threads.
    @Test func scopedDispatchAndSubscribeUnderContentionReadTheirOwnWrite() async {
        let store = Store(initialState: Parent()) { (state: inout Parent, action: ParentAction) -> Effect<ParentAction> in
            Self.parentReducer(&state, action)
        }
        let child = store.scope(state: \.child, action: ParentAction.child)
        // A re-entrant parent subscriber: each child change dispatches one `.add` from inside the store's work,
        // which is part of the caller's chain.
        let reentrant = store.subscribe(\.child) { counts in
            Self.busyFor(microseconds: 5)
            let total = counts.reduce(0, +)
            if total > 0 { store.dispatch(.add(total % 4)) }
        }
        let parentMisses = Atomic<Int>(0)
        let childMisses = Atomic<Int>(0)
        let nestedMisses = Atomic<Int>(0)
        let done = await Self.onDetachedThreads(4) { thread in
            for number in 1...500 {
                let token = child.subscribe { (_: [Int]) in }
                child.dispatch(thread)
                let state = store.state
                if state.child[thread] != number { parentMisses.add(1, ordering: .relaxed) }
                if child.state[thread] < number { childMisses.add(1, ordering: .relaxed) }
                // Every child action so far, and the `.add` each sent, is applied.
                let myTotalAtLeast = number
                if state.counts.reduce(0, +) < myTotalAtLeast { nestedMisses.add(1, ordering: .relaxed) }
                token.cancel()
            }
        }
        #expect(done)
        #expect(parentMisses.load(ordering: .relaxed) == 0, "parent did not hold the child's action")
        #expect(childMisses.load(ordering: .relaxed) == 0, "scoped store did not show its own write")
        #expect(nestedMisses.load(ordering: .relaxed) == 0, "nested dispatches not applied")
        reentrant.cancel()
    }

    @Test func aPersistedStoreUnderContentionReadsItsOwnWrite() async {
        let store = Store(
            initialState: Parent(), key: "readYourOwnWrite.persisted", storage: MemoryStorage(), reducer: Self.parentReducer
        )
        let slow = store.subscribe { (_: Parent) in Self.busyFor(microseconds: 10) }
        let misses = Atomic<Int>(0)
        let done = await Self.onDetachedThreads(4) { thread in
            for number in 1...500 {
                store.dispatch(.add(thread))
                if store.state.counts[thread] != number { misses.add(1, ordering: .relaxed) }
            }
        }
        #expect(done)
        #expect(misses.load(ordering: .relaxed) == 0)
        slow.cancel()
    }

    /// `travel(to:)` and `replay` from outside wait like a dispatch: once they return, the state is the travelled one
    /// (the action another thread dispatched before is applied first).
    @Test func timeTravelFromOutsideWaitsForTheBusyStore() async throws {
        let store = Self.logStore()
        store.startRecording()
        store.dispatch("one")
        store.dispatch("two")
        let gate = Atomic<Int>(0)
        let token = store.subscribe { (log: Log) in
            guard log.last == "slow" else { return }
            gate.store(1, ordering: .releasing)
            Self.busyFor(microseconds: 2_000)
        }
        let wrong = Atomic<Int>(0)
        let done = await Self.onDetachedThreads(2) { thread in
            if thread == 0 {
                store.dispatch("slow")
            } else {
                Self.spin { gate.load(ordering: .acquiring) == 1 }
                try? store.travel(to: 1)
                if store.state.counts != ["one": 1] { wrong.add(1, ordering: .relaxed) }
            }
        }
        #expect(done)
        #expect(wrong.load(ordering: .relaxed) == 0, "travel(to:) returned before the travel was made")
        token.cancel()
        _ = store.stopRecording()
    }

    /// Tasks on the cooperative pool block in `dispatch` (holding every pool thread) while others `await send`:
    /// everything finishes, and every sender reads its own write.
    @Test func asyncSendRacingBlockingDispatchOnAStarvedPool() async {
        let store = Store(initialState: Parent(), reducer: Self.parentReducer)
        let slow = store.subscribe { (_: Parent) in Self.busyFor(microseconds: 20) }
        let misses = Atomic<Int>(0)
        let finished = Arc()
        for thread in 0..<4 {
            Task.detached { @Sendable in
                for number in 1...200 {
                    if thread % 2 == 0 {
                        store.dispatch(.add(thread))
                    } else {
                        await store.send(.add(thread))
                    }
                    if store.state.counts[thread] != number { misses.add(1, ordering: .relaxed) }
                }
                finished.count.add(1, ordering: .releasing)
            }
        }
        // Watched from a thread of its own: the pool may be starved.
        let done = await offThePool {
            Self.spin(seconds: 120) { finished.count.load(ordering: .acquiring) == 4 }
        }
        #expect(done, "senders and dispatchers on the pool did not finish")
        #expect(misses.load(ordering: .relaxed) == 0)
        slow.cancel()
    }

    /// An effect floods the store with detached actions (a background thread works them off) while threads
    /// dispatch and scoped tasks `await send`: each caller reads its own write, and everything is applied.
    @Test func detachedFloodInTheBackgroundWhileCallersArrive() async {
        let store = Store(initialState: Parent()) { (state: inout Parent, action: ParentAction) -> Effect<ParentAction> in
            if case .add(3) = action, state.counts[3] == 0 {
                state.counts[3] += 1
                return .run { send in for _ in 0..<2_000 { send(.add(3)) } }
            }
            return Self.parentReducer(&state, action)
        }
        let child = store.scope(state: \.child, action: ParentAction.child)
        let slow = store.subscribe { (_: Parent) in Self.busyFor(microseconds: 5) }
        store.dispatch(.add(3))
        let misses = Atomic<Int>(0)
        let finished = Arc()
        Task.detached { @Sendable in
            for number in 1...200 {
                await child.send(2)
                if child.state[2] != number { misses.add(1, ordering: .relaxed) }
            }
            finished.count.add(1, ordering: .releasing)
        }
        let done = await Self.onDetachedThreads(2) { thread in
            for number in 1...300 {
                store.dispatch(.add(thread))
                if store.state.counts[thread] != number { misses.add(1, ordering: .relaxed) }
            }
        }
        #expect(done)
        let sent = await eventually { finished.count.load(ordering: .acquiring) == 1 }
        #expect(sent)
        #expect(misses.load(ordering: .relaxed) == 0)
        let flooded = await eventually { store.state.counts[3] == 2_001 }
        #expect(flooded, "detached actions lost: \(store.state.counts[3])")
        slow.cancel()
    }
}
