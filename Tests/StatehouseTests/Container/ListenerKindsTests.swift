import Dispatch
import Foundation
import Observation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("Named listeners, attached listeners, async values, Observation, @Listenable")
struct ListenerKindsTests {
    // MARK: Named listeners

    @Test func bindingANameAgainReplacesTheOldClosure() {
        let title = StateContainer("a", key: "named.replace")
        let old = Recorder<String>()
        let new = Recorder<String>()
        title.bind(name: "FirstScreen.title") { old.append($0) }
        title.modify("b")
        title.bind(name: "FirstScreen.title") { new.append($0) }
        title.modify("c")
        title.modify("d")
        #expect(old.elements == ["b"])
        #expect(new.elements == ["c", "d"])
    }

    @Test func differentNamesAreIndependent() {
        let title = StateContainer("a", key: "named.independent")
        let first = Recorder<String>()
        let second = Recorder<String>()
        title.bind(name: "one") { first.append($0) }
        title.bind(name: "two") { second.append($0) }
        title.modify("b")
        #expect(first.elements == ["b"])
        #expect(second.elements == ["b"])
    }

    @Test func bindAndFireCallsAtOnceWithTheCurrentValue() {
        let title = StateContainer("now", key: "named.fire")
        let seen = Recorder<String>()
        title.bindAndFire(name: "label") { seen.append($0) }
        #expect(seen.elements == ["now"])
        title.modify("later")
        #expect(seen.elements == ["now", "later"])
    }

    @Test func unbindStopsTheNamedListener() {
        let title = StateContainer("a", key: "named.unbind")
        let seen = Recorder<String>()
        title.bind(name: "label") { seen.append($0) }
        title.unbind(name: "label")
        title.unbind(name: "never bound")
        title.modify("b")
        #expect(seen.elements.isEmpty)
    }

    @Test func replacedClosureIsNeverCalledWhileChangesRaceWithRebinding() {
        // One thread changes the value without pause; this one rebinds the name with a new generation each time.
        // A generation's closure must never start once the next generation's bind has returned.
        let value = StateContainer(0, key: "named.race")
        let latestBound = Atomic<Int>(-1)
        let violations = Atomic<Int>(0)
        let stop = Atomic<Bool>(false)
        let started = DispatchSemaphore(value: 0)
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            value.update { $0 += 1 }
            started.signal()
            while !stop.load(ordering: .relaxed) { value.update { $0 += 1 } }
            stopped.signal()
        }
        started.wait()
        for generation in 0..<2_000 {
            value.bind(name: "racer") { _ in
                if latestBound.load(ordering: .sequentiallyConsistent) > generation {
                    violations.add(1, ordering: .relaxed)
                }
            }
            latestBound.store(generation, ordering: .sequentiallyConsistent)
        }
        stop.store(true, ordering: .relaxed)
        stopped.wait()
        #expect(violations.load(ordering: .relaxed) == 0)
        #expect(value.value > 0)
    }

    // MARK: Attached listeners

    final class Screen: StateListener, @unchecked Sendable {  // test-only: state guarded by Recorder
        let queue = DispatchQueue(label: "test.screen")
        let seen = Recorder<Int>()
        var stateListenerQueue: DispatchQueue { queue }
        func stateModified<T>(_ state: StateContainer<T>) {
            dispatchPrecondition(condition: .onQueue(queue))
            if let value = state.value as? Int { seen.append(value) }
        }
    }

    @Test func attachedListenerIsCalledOnItsQueue() async {
        let count = StateContainer(0, key: "attach.calls")
        let screen = Screen()
        count.attach(listener: screen)
        count.attach(listener: screen)  // attaching twice registers once
        count.modify(1)
        count.modify(2)
        #expect(await eventually { screen.seen.count >= 2 })
        try? await Task.sleep(for: .milliseconds(20))
        #expect(screen.seen.elements == [2, 2] || screen.seen.elements == [1, 2])
        #expect(count.locked { $0.observers.count } == 1)
    }

    @Test func attachedListenerIsHeldWeaklyAndRemovedAfterItDies() async {
        let count = StateContainer(0, key: "attach.weak")
        weak var weakScreen: Screen?
        do {
            let screen = Screen()
            weakScreen = screen
            count.attach(listener: screen)
        }
        #expect(weakScreen == nil)
        count.modify(1)
        #expect(await eventually { count.locked { $0.observers.isEmpty } })
    }

    @Test func detachedListenerIsNotCalled() async {
        let count = StateContainer(0, key: "attach.detach")
        let screen = Screen()
        count.attach(listener: screen)
        count.detach(listener: screen)
        count.modify(1)
        screen.queue.sync {}
        try? await Task.sleep(for: .milliseconds(20))
        #expect(screen.seen.elements.isEmpty)
    }

    // MARK: Async values

    @Test func valuesYieldsTheCurrentValueThenEveryChange() async {
        let count = StateContainer(0, key: "values.every")
        var iterator = count.values.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        count.modify(1)
        count.modify(2)
        #expect(await iterator.next() == 1)
        #expect(await iterator.next() == 2)
    }

    @Test func valuesFinishWhenTheContainerIsDeallocated() async {
        var count: StateContainer<Int>? = StateContainer(0, key: "values.finish")
        let stream = count!.values
        count = nil
        var received: [Int] = []
        for await value in stream { received.append(value) }
        #expect(received == [0])
    }

    @Test func leavingTheLoopEndsTheSubscription() async {
        let count = StateContainer(0, key: "values.leave")
        for await value in count.values where value == 0 { break }
        #expect(await eventually { count.locked { $0.observers.isEmpty } })
    }

    // MARK: Observation

    @Test func observationTrackingFiresOnChange() {
        let count = StateContainer(0, key: "observation.fires")
        let changes = Recorder<Bool>()
        let seen = withObservationTracking {
            count.value
        } onChange: {
            changes.append(true)
        }
        #expect(seen == 0)
        #expect(changes.count == 0)
        count.modify(1)
        #expect(changes.count == 1)
        count.update { $0 += 1 }
        #expect(changes.count == 1)  // tracking is one-shot, as in Observation
    }

    @Test func observationTrackingFiresOnUpdateAndDidModify() {
        let count = StateContainer(0, key: "observation.update")
        let changes = Recorder<Bool>()
        _ = withObservationTracking { count.value } onChange: { changes.append(true) }
        count.update { $0 += 1 }
        _ = withObservationTracking { count.value } onChange: { changes.append(true) }
        count.didModify()
        #expect(changes.count == 2)
    }

    // MARK: @Listenable

    final class UserInfo {
        @Listenable var name = "NIX"
    }

    @Test func listenablePropertyIsAContainer() {
        let user = UserInfo()
        let seen = Recorder<String>()
        user.$name.bindAndFire(name: "FirstScreen.title") { seen.append($0) }
        user.name = "Ann"
        #expect(user.name == "Ann")
        #expect(seen.elements == ["NIX", "Ann"])
    }

    @Test func listenablePropertiesOfTwoInstancesDoNotShareAKey() {
        let reported = Recorder<StatehouseDiagnostic>()
        StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
            let first = UserInfo()
            let second = UserInfo()
            #expect(first.$name.key != second.$name.key)
        }
        #expect(reported.elements.isEmpty)
    }
}
