import Dispatch
import Foundation
import MetricsTestKit
import StatehouseMetrics
import StatehouseTestSupport
import Synchronization
import Testing
@testable import Statehouse

/// The promises, attacked: values stay out unless a rule lets them in, counts are exact under threads and
/// releases, cancel means cancel, and a container nobody records is left exactly as it was. Serialized: some tests
/// block threads.
@Suite("Attacking the recording", .serialized)
struct MetricsAttackTests {
    static func listeners<Value>(of container: StateContainer<Value>) -> Int {
        container.locked { $0.observers.count }
    }

    @Test func aContainerNobodyRecordsGetsNoListenerAndRecordsNothing() {
        let fixture = MetricsFixture()
        let quiet = StateContainer(0, key: "metrics.attack.quiet")
        let recorded = StateContainer(0, key: "metrics.attack.recorded")
        let token = recorded.recordChanges(to: fixture.metrics, values: .described)
        #expect(Self.listeners(of: quiet) == 0)
        quiet.modify(1)
        quiet.update { $0 += 1 }
        #expect(fixture.changes(key: "metrics.attack.quiet") == 0)
        #expect(fixture.logs.entries.isEmpty)
        #expect(Self.listeners(of: recorded) == 1)
        token.cancel()
        // Cancelling leaves nothing behind either.
        #expect(Self.listeners(of: recorded) == 0)
        recorded.modify(1)
        #expect(fixture.factory.counters.isEmpty || fixture.changes(key: "metrics.attack.recorded") == 0)
    }

    @Test func changesQueuedForTheRecordingAreCountedWhenTheContainerIsReleasedFirst() async {
        let fixture = MetricsFixture()
        let queue = DispatchQueue(label: "test.metrics.release")
        queue.suspend()
        var token: SubscriptionToken?
        do {
            let count = StateContainer(0, key: "metrics.attack.released")
            token = count.recordChanges(to: fixture.metrics, on: .queue(queue))
            for _ in 0..<3 { count.update { $0 += 1 } }
        }
        queue.resume()
        #expect(await eventually(timeout: .seconds(60)) { fixture.changes(key: "metrics.attack.released") == 3 })
        withExtendedLifetime(token) {}
    }

    @Test func nothingIsRecordedOnceCancelReturnsWithQueuedDelivery() async {
        let fixture = MetricsFixture()
        let key = "metrics.attack.cancelQueued"
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

    @Test func nestedPayloadsStayOutOfLogsAndMetrics() {
        let fixture = MetricsFixture()
        let secret = "nested-secret-\(UInt64.random(in: 0...UInt64.max))"
        let store = Store(
            initialState: 0, reducer: { (_: inout Int, _: AppAction) in },
            middleware: [.metrics(fixture.metrics, store: "app")]
        )
        store.dispatch(.profile(.setPassword(old: secret, new: secret)))
        store.dispatch(.login(Credentials(user: secret, password: secret)))
        store.dispatch(.batch([.profile(.rename(secret)), .reset]))
        store.dispatch(.reset)
        #expect(fixture.logs.entries.map { $0.metadata["action"] } == ["profile", "login", "batch", "reset"])
        #expect(fixture.loggedValues == [nil, nil, nil, nil])
        #expect(!fixture.logText.contains { $0.contains(secret) })
        #expect(!fixture.dimensionText.contains { $0.contains(secret) })
    }

    @Test func aRuleThatShowsOneNestedCaseShowsNothingElse() {
        let fixture = MetricsFixture()
        let secret = "rule-secret-\(UInt64.random(in: 0...UInt64.max))"
        let rule = ValueRedaction<AppAction>.loggable { action in
            if case .profile(.select(let tab)) = action { "\(tab)" } else { nil }
        }
        let store = Store(
            initialState: 0, reducer: { (_: inout Int, _: AppAction) in },
            middleware: [.metrics(fixture.metrics, store: "app", actions: rule)]
        )
        store.dispatch(.profile(.select(tab: .settings)))
        store.dispatch(.profile(.rename(secret)))
        #expect(fixture.loggedValues == ["settings", nil])
        #expect(!fixture.logText.contains { $0.contains(secret) })
    }

    @Test func describedValuesReachLogsButNeverMetrics() {
        let fixture = MetricsFixture()
        let secret = "described-\(UInt64.random(in: 0...UInt64.max))"
        let container = StateContainer("", key: "metrics.attack.described")
        let token = container.recordChanges(to: fixture.metrics, values: .described)
        let store = fixture.store("described", actions: .described)
        container.modify(secret)
        store.dispatch(.rename(secret))
        #expect(fixture.logText.contains { $0.contains(secret) })
        #expect(!fixture.dimensionText.contains { $0.contains(secret) })
        token.cancel()
    }
}
