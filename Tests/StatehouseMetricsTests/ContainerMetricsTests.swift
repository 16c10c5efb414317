import Dispatch
import Logging
import MetricsTestKit
@testable import Statehouse
import StatehouseMetrics
import StatehouseTestSupport
import Testing

@Suite("Recording a container's changes")
struct ContainerMetricsTests {
    static func listeners<Value>(of container: StateContainer<Value>) -> Int {
        container.locked { $0.observers.count }
    }

    @Test func countsEachChangeUnderItsKey() {
        let fixture = MetricsFixture()
        let theme = StateContainer("blue", key: "metrics.count.theme")
        let volume = StateContainer(5, key: "metrics.count.volume")
        let tokens = [theme.recordChanges(to: fixture.metrics), volume.recordChanges(to: fixture.metrics)]
        theme.modify("red")
        theme ~> "green"
        theme.update { $0 += "!" }
        volume.modify(6)
        #expect(fixture.changes(key: "metrics.count.theme") == 3)
        #expect(fixture.changes(key: "metrics.count.volume") == 1)
        let keys = fixture.logs.entries.map { $0.metadata["key"] }
        #expect(keys == ["metrics.count.theme", "metrics.count.theme", "metrics.count.theme", "metrics.count.volume"])
        #expect(fixture.logs.entries.allSatisfy { $0.message == "state changed" && $0.level == .info })
        withExtendedLifetime(tokens) {}
    }

    @Test func countsInPlaceChangesAnnouncedWithDidModify() {
        final class Box: Sendable {}
        let fixture = MetricsFixture()
        let box = StateContainer(Box(), key: "metrics.didModify")
        let token = box.recordChanges(to: fixture.metrics)
        box.didModify()
        #expect(fixture.changes(key: "metrics.didModify") == 1)
        token.cancel()
    }

    @Test func changesBeforeRecordingStartedAreNotCounted() {
        let fixture = MetricsFixture()
        let count = StateContainer(0, key: "metrics.before")
        count.modify(1)
        count.modify(2)
        let token = count.recordChanges(to: fixture.metrics)
        count.modify(3)
        #expect(fixture.changes(key: "metrics.before") == 1)
        token.cancel()
    }

    @Test func logsNeitherTheValueNorAnythingMadeFromItByDefault() {
        let fixture = MetricsFixture()
        let secret = "hunter2-\(UInt64.random(in: 0...UInt64.max))"
        let password = StateContainer("", key: "metrics.redacted")
        let token = password.recordChanges(to: fixture.metrics)
        password.modify(secret)
        password.update { $0 += secret }
        #expect(fixture.changes(key: "metrics.redacted") == 2)
        #expect(fixture.loggedValues == [nil, nil])
        #expect(!fixture.logText.contains { $0.contains("hunter2") })
        #expect(!fixture.dimensionText.contains { $0.contains("hunter2") })
        token.cancel()
    }

    @Test func logsTheValueWhenTheRuleDescribesIt() {
        let fixture = MetricsFixture()
        let theme = StateContainer("blue", key: "metrics.described")
        let token = theme.recordChanges(to: fixture.metrics, values: .described)
        theme.modify("red")
        theme.modify("green")
        #expect(fixture.loggedValues == ["red", "green"])
        #expect(!fixture.dimensionText.contains { $0 == "red" || $0 == "green" })
        token.cancel()
    }

    @Test func logsWhatTheClosureMakesOfTheValueAndNothingWhereItReturnsNil() {
        let fixture = MetricsFixture()
        let apiToken = StateContainer<String?>(nil, key: "metrics.loggable")
        let token = apiToken.recordChanges(to: fixture.metrics, values: .loggable { $0 == nil ? nil : "set" })
        apiToken.modify("abc-secret")
        apiToken.modify(nil)
        #expect(fixture.loggedValues == ["set", nil])
        #expect(!fixture.logText.contains { $0.contains("abc-secret") })
        token.cancel()
    }

    @Test func cancellingTheTokenStopsTheRecording() {
        let fixture = MetricsFixture()
        let count = StateContainer(0, key: "metrics.cancel")
        let token = count.recordChanges(to: fixture.metrics)
        count.modify(1)
        token.cancel()
        count.modify(2)
        count.update { $0 += 1 }
        #expect(fixture.changes(key: "metrics.cancel") == 1)
        #expect(fixture.logs.entries.count == 1)
    }

    @Test func releasingTheTokenStopsTheRecording() {
        let fixture = MetricsFixture()
        let count = StateContainer(0, key: "metrics.release")
        var token: SubscriptionToken? = count.recordChanges(to: fixture.metrics)
        count.modify(1)
        withExtendedLifetime(token) {}
        token = nil
        count.modify(2)
        #expect(fixture.changes(key: "metrics.release") == 1)
        #expect(fixture.logs.entries.count == 1)
    }

    @Test func recordingDoesNotKeepTheContainerAlive() {
        let fixture = MetricsFixture()
        weak var released: StateContainer<Int>?
        var token: SubscriptionToken?
        do {
            let count = StateContainer(0, key: "metrics.lifetime")
            token = count.recordChanges(to: fixture.metrics)
            released = count
        }
        #expect(released == nil)
        withExtendedLifetime(token) {}
    }

    @Test func recordsOnTheQueueItIsGiven() async {
        let fixture = MetricsFixture()
        let queue = DispatchQueue(label: "test.metrics.queue")
        let count = StateContainer(0, key: "metrics.queue")
        let token = count.recordChanges(to: fixture.metrics, values: .described, on: .queue(queue))
        for _ in 0..<100 { count.update { $0 += 1 } }
        // A call logs after it counts: wait for the last event, not for the count.
        #expect(await eventually { fixture.loggedValues.last == "100" })
        #expect(fixture.changes(key: "metrics.queue") == 100)
        token.cancel()
    }

    /// A container nobody records is left exactly as it was: no listener, nothing counted; and a cancelled
    /// recording leaves no listener behind either.
    @Test func aContainerNobodyRecordsGetsNoListenerAndRecordsNothing() {
        let fixture = MetricsFixture()
        let quiet = StateContainer(0, key: "metrics.unrecorded.quiet")
        let recorded = StateContainer(0, key: "metrics.unrecorded.recorded")
        let token = recorded.recordChanges(to: fixture.metrics, values: .described)
        #expect(Self.listeners(of: quiet) == 0)
        quiet.modify(1)
        quiet.update { $0 += 1 }
        #expect(fixture.changes(key: "metrics.unrecorded.quiet") == 0)
        #expect(fixture.logs.entries.isEmpty)
        #expect(Self.listeners(of: recorded) == 1)
        token.cancel()
        // Cancelling leaves nothing behind either.
        #expect(Self.listeners(of: recorded) == 0)
        recorded.modify(1)
        #expect(fixture.factory.counters.isEmpty || fixture.changes(key: "metrics.unrecorded.recorded") == 0)
    }

    /// Changes queued for the recording are counted, also when the container is released before they run.
    @Test func changesQueuedForTheRecordingAreCountedWhenTheContainerIsReleasedFirst() async {
        let fixture = MetricsFixture()
        let queue = DispatchQueue(label: "test.metrics.release")
        queue.suspend()
        var token: SubscriptionToken?
        do {
            let count = StateContainer(0, key: "metrics.releasedFirst")
            token = count.recordChanges(to: fixture.metrics, on: .queue(queue))
            for _ in 0..<3 { count.update { $0 += 1 } }
        }
        queue.resume()
        #expect(await eventually { fixture.changes(key: "metrics.releasedFirst") == 3 })
        withExtendedLifetime(token) {}
    }
}
