import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// "Read your own write": a `dispatch` from outside the store's work returns once its action — and what applying it
/// sends synchronously — is applied and the subscribers told; once every `dispatch` has returned, every action is
/// applied; callers wait their turn, so the queue is bounded by the number of waiting callers.
///
/// The window: a store kept busy by slow subscribers while other threads dispatch. A `dispatch` that only queues its
/// action returns before it is applied there.
@Suite("Read your own write", .serialized)
struct ReadYourOwnWriteTests {
    struct Tally: Equatable, Sendable {
        var counts = [Int](repeating: 0, count: 8)
        var echoes = [Int](repeating: 0, count: 8)
        var child = Child()
    }

    struct Child: Equatable, Sendable {
        var counts = [Int](repeating: 0, count: 8)
    }

    enum TallyAction: Sendable {
        case add(thread: Int)
        case echo(thread: Int)
        case addThenSend(thread: Int)
        case child(ChildAction)
    }

    enum ChildAction: Sendable {
        case add(thread: Int)
    }

    static func tallyStore() -> Store<Tally, TallyAction> {
        Store(initialState: Tally()) { (state: inout Tally, action: TallyAction) -> Effect<TallyAction> in
            switch action {
            case .add(let thread):
                state.counts[thread] += 1
            case .echo(let thread):
                state.echoes[thread] += 1
            case .addThenSend(let thread):
                state.counts[thread] += 1
                return .send(.echo(thread: thread))
            case .child(.add(let thread)):
                state.child.counts[thread] += 1
            }
            return .none
        }
    }

    /// Work that takes a while without waiting for anything: a slow subscriber.
    static func busyFor(microseconds: Int) {
        let end = ContinuousClock.now + .microseconds(microseconds)
        while ContinuousClock.now < end {}
    }

    static let threads = 4
    static let perThread = 1_000

    @Test func eachThreadReadsItsOwnActionRightAfterDispatch() async {
        let store = Self.tallyStore()
        let token = store.subscribe { (_: Tally) in Self.busyFor(microseconds: 20) }
        let misses = Atomic<Int>(0)
        await onNewThreads(Self.threads) { thread in
            for number in 1...Self.perThread {
                store.dispatch(.add(thread: thread))
                if store.state.counts[thread] != number { misses.add(1, ordering: .relaxed) }
            }
        }
        #expect(misses.load(ordering: .relaxed) == 0, "reads that did not see their own dispatch")
        #expect(store.state.counts.reduce(0, +) == Self.threads * Self.perThread, "actions not applied once all returned")
        token.cancel()
    }

    /// Containers: a caller's `update` and `modify` are visible to it when they return, however slow the listeners
    /// whose deliveries they leave to others.
    @Test func aContainersUpdateIsVisibleToItsCallerWhenItReturns() async {
        let container = StateContainer([Int](repeating: 0, count: Self.threads), key: "read-your-own-update")
        let token = container.observe { _ in Self.busyFor(microseconds: 20) }
        let misses = Atomic<Int>(0)
        await onNewThreads(Self.threads) { thread in
            for number in 1...Self.perThread {
                container.update { $0[thread] += 1 }
                if container.value[thread] != number { misses.add(1, ordering: .relaxed) }
            }
        }
        #expect(misses.load(ordering: .relaxed) == 0)
        token.cancel()
    }

    @Test func whatApplyingSendsIsAppliedBeforeDispatchReturns() async {
        let store = Self.tallyStore()
        // A subscriber that dispatches (re-entrant) and a `.send` effect: both part of the caller's action.
        let reentrant = store.subscribe(\.counts) { counts in
            Self.busyFor(microseconds: 10)
            for thread in counts.indices where counts[thread] > store.state.echoes[thread] * 2 {
                store.dispatch(.echo(thread: thread))
            }
        }
        let misses = Atomic<Int>(0)
        await onNewThreads(Self.threads) { thread in
            for number in 1...Self.perThread / 2 {
                store.dispatch(.addThenSend(thread: thread))
                let state = store.state
                if state.counts[thread] != number || state.echoes[thread] < number {
                    misses.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(misses.load(ordering: .relaxed) == 0, "dispatches that returned before their nested actions")
        reentrant.cancel()
    }

    @Test func aScopedStoresParentHoldsTheActionWhenDispatchReturns() async {
        let store = Self.tallyStore()
        let child = store.scope(state: \.child, action: TallyAction.child)
        let token = store.subscribe { (_: Tally) in Self.busyFor(microseconds: 20) }
        let childToken = child.subscribe(\.counts) { _ in }
        let misses = Atomic<Int>(0)
        await onNewThreads(Self.threads) { thread in
            for number in 1...Self.perThread {
                child.dispatch(.add(thread: thread))
                if store.state.child.counts[thread] != number || child.state.counts[thread] != number {
                    misses.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(misses.load(ordering: .relaxed) == 0)
        #expect(store.state.child.counts.reduce(0, +) == Self.threads * Self.perThread)
        token.cancel()
        childToken.cancel()
    }

    @Test func subscribersHaveHeardEveryActionWhenTheDispatchesReturn() async {
        let store = Self.tallyStore()
        let heard = Atomic<Int>(0)
        let listening = store.subscribe { (_: Tally) in
            heard.add(1, ordering: .relaxed)
            Self.busyFor(microseconds: 10)
        }
        // Churn: other subscriptions come and go while the threads dispatch.
        await onNewThreads(Self.threads + 1) { thread in
            guard thread < Self.threads else {
                for _ in 0..<200 { store.subscribe(\.echoes) { _ in }.cancel() }
                return
            }
            for _ in 0..<Self.perThread { store.dispatch(.add(thread: thread)) }
        }
        // The first call is the subscription's current value.
        #expect(heard.load(ordering: .relaxed) == Self.threads * Self.perThread + 1)
        listening.cancel()
    }

    @Test func producersFasterThanTheSubscriberQueueAtMostOneActionEach() async {
        let store = Self.tallyStore()
        let mostQueued = Atomic<Int>(0)
        // The subscriber runs on the worker, with the store busy: it sees what is queued behind it.
        let token = store.subscribe { (_: Tally) in
            let queued = store.inbox.turns.withLock { $0.queue.count }
            mostQueued.max(queued, ordering: .relaxed)
            Self.busyFor(microseconds: 50)
        }
        await onNewThreads(Self.threads) { thread in
            for _ in 0..<Self.perThread { store.dispatch(.add(thread: thread)) }
        }
        // Each producer loops 100× faster than the subscriber; each waits for its action before queueing the next.
        #expect(mostQueued.load(ordering: .relaxed) <= Self.threads)
        #expect(store.state.counts.reduce(0, +) == Self.threads * Self.perThread)
        token.cancel()
    }

    /// A subscription's registration is not waited for, but a thread subscribing and cancelling in a loop while the
    /// store is busy must not queue registrations without bound either (nor starve the dispatchers behind them).
    @Test func registrationsMadeInALoopOnABusyStoreQueueABoundedBacklog() async {
        let store = Self.tallyStore()
        let mostQueued = Atomic<Int>(0)
        let token = store.subscribe { (_: Tally) in
            mostQueued.max(store.inbox.turns.withLock { $0.queue.count }, ordering: .relaxed)
            Self.busyFor(microseconds: 20)
        }
        let dispatchersLeft = Atomic<Int>(2)
        await onNewThreads(3) { thread in
            guard thread < 2 else {
                while dispatchersLeft.load(ordering: .relaxed) > 0 { store.subscribe(\.echoes) { _ in }.cancel() }
                return
            }
            for _ in 0..<Self.perThread { store.dispatch(.add(thread: thread)) }
            dispatchersLeft.subtract(1, ordering: .relaxed)
        }
        #expect(mostQueued.load(ordering: .relaxed) <= Inbox<Int>.backlog + 3)
        #expect(store.state.counts.reduce(0, +) == 2 * Self.perThread)
        token.cancel()
    }

    @Test func sendFromManyTasksSuspendsUntilApplied() async {
        let store = Self.tallyStore()
        let token = store.subscribe { (_: Tally) in Self.busyFor(microseconds: 20) }
        let misses = await withTaskGroup(of: Int.self) { group in
            for task in 0..<Self.threads {
                group.addTask {
                    var misses = 0
                    for number in 1...Self.perThread / 4 {
                        await store.send(.add(thread: task))
                        if store.state.counts[task] != number { misses += 1 }
                    }
                    return misses
                }
            }
            // Threads dispatching at the same time keep the store busy.
            group.addTask {
                await onNewThreads(2) { thread in
                    for _ in 0..<Self.perThread / 2 { store.dispatch(.add(thread: Self.threads + thread)) }
                }
                return 0
            }
            return await group.reduce(0, +)
        }
        #expect(misses == 0)
        #expect(store.state.counts.reduce(0, +) == Self.perThread + Self.perThread)
        token.cancel()
    }

    /// More tasks blocked in `dispatch` than the cooperative pool has threads, and tasks suspended in `send` between
    /// them: the turn must never wait for a suspended task, which would need one of the blocked threads to resume.
    @Test func blockingAndSuspendedCallersOnTheCooperativePoolAllFinish() async {
        let store = Self.tallyStore()
        let token = store.subscribe { (_: Tally) in Self.busyFor(microseconds: 5) }
        let blocking = ProcessInfo.processInfo.activeProcessorCount + 2
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<blocking + 2 {
                group.addTask {
                    for _ in 0..<200 {
                        if task < blocking {
                            store.dispatch(.add(thread: task % 8))
                        } else {
                            await store.send(.echo(thread: task % 8))
                        }
                    }
                }
            }
        }
        let state = store.state
        #expect(state.counts.reduce(0, +) == blocking * 200)
        #expect(state.echoes.reduce(0, +) == 2 * 200)
        token.cancel()
    }

    @Test func aScopedStoresSendWaitsForItsParent() async {
        let store = Self.tallyStore()
        let child = store.scope(state: \.child, action: TallyAction.child)
        await child.send(.add(thread: 1))
        #expect(store.state.child.counts[1] == 1)
    }

    @Test func aDispatchFromInsideTheWorkIsQueuedNotWaitedFor() {
        let store = Self.tallyStore()
        let seenInside = Locked<[Int]>([])
        let token = store.subscribe(\.counts[0], initial: false) { count in
            if count == 1 {
                store.dispatch(.add(thread: 0))
                // Queued behind this call: not applied yet, and waiting for it would wait for itself.
                seenInside.withLock { $0.append(store.state.counts[0]) }
            }
        }
        store.dispatch(.add(thread: 0))
        #expect(seenInside.withLock { $0 } == [1])
        #expect(store.state.counts[0] == 2)
        token.cancel()
    }

    /// Store A's subscriber dispatches to B while B's subscriber dispatches to A, from several threads: each worker
    /// would wait for the other. The wait that would close the cycle is not made.
    @Test func twoStoresDispatchingToEachOtherDoNotDeadlock() async {
        let first = Self.tallyStore()
        let second = Self.tallyStore()
        let forward = first.subscribe(\.counts[0], initial: false) { _ in second.dispatch(.echo(thread: 1)) }
        let back = second.subscribe(\.counts[0], initial: false) { _ in first.dispatch(.echo(thread: 1)) }
        let finished = Atomic<Int>(0)
        // Threads that never return if the stores deadlock; the test then fails at the deadline instead of hanging.
        for thread in 0..<Self.threads {
            Thread.detachNewThread {
                for _ in 0..<Self.perThread {
                    (thread.isMultiple(of: 2) ? first : second).dispatch(.add(thread: 0))
                }
                finished.add(1, ordering: .relaxed)
            }
        }
        let done = await eventually { finished.load(ordering: .relaxed) == Self.threads }
        #expect(done, "threads dispatching to two stores that dispatch to each other did not finish")
        #expect(first.state.counts[0] + second.state.counts[0] == Self.threads * Self.perThread)
        #expect(first.state.echoes[1] == second.state.counts[0])
        #expect(second.state.echoes[1] == first.state.counts[0])
        forward.cancel()
        back.cancel()
    }
}
