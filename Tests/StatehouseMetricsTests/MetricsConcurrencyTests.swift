import Dispatch
import Foundation
import MetricsTestKit
import Statehouse
import StatehouseMetrics
import StatehouseTestSupport
import Synchronization
import Testing

/// Many threads at once. Serialized: these tests block threads, which would starve Swift Testing's cooperative pool
/// on a two-core machine if they ran side by side.
@Suite("Recording under concurrency", .serialized)
struct MetricsConcurrencyTests {
    static let threads = 8
    static let iterations = 2_000

    @Test(arguments: [false, true])
    func countsEveryChangeFromManyThreadsExactly(queued: Bool) async {
        let fixture = MetricsFixture()
        let key = "metrics.threads.\(queued)"
        let count = StateContainer(0, key: key)
        let queue = DispatchQueue(label: "test.metrics.threads", attributes: .concurrent)
        let delivery: Delivery = queued ? .queue(queue) : .synchronous
        let token = count.recordChanges(to: fixture.metrics, values: .described, on: delivery)
        await onNewThreads(Self.threads) { _ in
            for _ in 0..<Self.iterations { count.update { $0 += 1 } }
        }
        let total = Self.threads * Self.iterations
        // The last changes may still be on their way: handed to a background thread, or queued.
        #expect(await eventually { fixture.changes(key: key) == Int64(total) })
        // Changes that queued up behind a running listener were coalesced into fewer events, the last one last.
        #expect(await eventually { fixture.loggedValues.last == "\(total)" })
        #expect(fixture.logs.entries.count <= total)
        #expect(fixture.changes(key: key) == Int64(total))
        token.cancel()
    }

    @Test func countsEveryActionFromManyThreadsExactly() async {
        let fixture = MetricsFixture()
        let store = fixture.store("threads")
        await onNewThreads(Self.threads) { thread in
            for iteration in 0..<Self.iterations {
                store.dispatch(iteration.isMultiple(of: 2) ? .visit : .rename("thread \(thread)"))
            }
        }
        let total = Self.threads * Self.iterations
        let half = Int64(total / 2)
        // The callers leave the rest of the queue to a background thread: under ThreadSanitizer, with the suite
        // running beside it on two cores, draining it once took more than a minute. Waiting for the visits alone is
        // not enough: every thread's last action is a rename, which may still be queued once the visits are all in
        // (CI once saw 7,999 renames that way).
        #expect(await eventually(timeout: .seconds(180)) {
            fixture.logs.entries.count >= total && store.state.visits >= Int(half)
        })
        #expect(store.state.visits == Int(half))
        #expect(fixture.actions(store: "threads", action: "visit") == half)
        #expect(fixture.actions(store: "threads", action: "rename") == half)
        #expect(fixture.logs.entries.count == total)
    }

    @Test func nothingIsRecordedOnceCancelReturnsWhileOtherThreadsChangeTheContainer() async {
        await duringThreadStorm {
            let fixture = MetricsFixture()
            let key = "metrics.threads.cancel"
            let count = StateContainer(0, key: key)
            let token = count.recordChanges(to: fixture.metrics)
            let stop = Atomic<Bool>(false)
            let finished = Atomic<Int>(0)
            // Threads of their own: on Linux, Dispatch's global queues are also the pool that runs this test's task.
            for _ in 0..<Self.threads {
                Thread {
                    while !stop.load(ordering: .relaxed) { count.update { $0 += 1 } }
                    finished.add(1, ordering: .relaxed)
                }.start()
            }
            #expect(await eventually { count.value >= 1_000 })
            token.cancel()
            let atCancel = (changes: fixture.changes(key: key), events: fixture.logs.entries.count, value: count.value)
            // Changes go on after the cancel; none of them may be recorded.
            #expect(await eventually { count.value >= atCancel.value + 1_000 })
            stop.store(true, ordering: .relaxed)
            #expect(await eventually { finished.load(ordering: .relaxed) == Self.threads })
            #expect(atCancel.changes > 0)
            #expect(fixture.changes(key: key) == atCancel.changes)
            #expect(fixture.logs.entries.count == atCancel.events)
        }
    }

    /// Cancel means cancel, with queued delivery: once `cancel()` returns, nothing more is recorded, also what was
    /// queued before it, while other threads go on changing the container.
    @Test func nothingIsRecordedOnceCancelReturnsWithQueuedDelivery() async {
        let fixture = MetricsFixture()
        let key = "metrics.threads.cancelQueued"
        let count = StateContainer(0, key: key)
        let queue = DispatchQueue(label: "test.metrics.cancelQueued")
        let token = count.recordChanges(to: fixture.metrics, values: .described, on: .queue(queue))
        let stop = Atomic<Bool>(false)
        let threads = Task {
            await onNewThreads(4) { _ in while !stop.load(ordering: .relaxed) { count.update { $0 += 1 } } }
        }
        #expect(await eventually { fixture.changes(key: key) >= 1_000 })
        // Blocks until a call in progress on the queue ends: off Swift's cooperative pool.
        await offThePool { token.cancel() }
        let atCancel = (changes: fixture.changes(key: key), events: fixture.logs.entries.count, value: count.value)
        #expect(await eventually { count.value >= atCancel.value + 1_000 })
        // Let whatever was queued before the cancel run, if it were to.
        await offThePool { queue.sync {} }
        stop.store(true, ordering: .relaxed)
        await threads.value
        #expect(fixture.changes(key: key) == atCancel.changes)
        #expect(fixture.logs.entries.count == atCancel.events)
    }

    /// Every case of an action enum is counted exactly, from many threads.
    @Test func everyCaseOfManyIsCountedExactlyFromManyThreads() async {
        let fixture = MetricsFixture()
        let store = fixture.store("cases")
        let actions: [ProfileAction] = [
            .visit, .rename("a"), .select(tab: .settings), .setPassword(old: "o", new: "n"),
        ]
        let threads = 8
        let rounds = 500
        await onNewThreads(threads) { thread in
            for round in 0..<rounds { store.dispatch(actions[(thread + round) % actions.count]) }
        }
        let each = Int64(threads * rounds / actions.count)
        // Every action must be in, not only the visits: another case may still be queued once they are.
        #expect(await eventually(timeout: .seconds(180)) {
            fixture.logs.entries.count >= threads * rounds && store.state.visits >= Int(each)
        })
        #expect(store.state.visits == Int(each))
        for name in ["visit", "rename", "select", "setPassword"] {
            #expect(fixture.actions(store: "cases", action: name) == each, "\(name)")
        }
        #expect(fixture.factory.counters(label: StateMetrics.actionsLabel).count == 4)
    }
}
