import Dispatch
import Foundation
import Observation
import Synchronization
import StatehouseTesting
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A tracked read (`withObservationTracking`) through each way of reading a container or a store hears the next change
/// through each way of changing it: the first tracked read included, nested in another tracking, after many untracked
/// reads, on many threads at once, and amid writers.
@Suite("Observation tracking hears the next change, whatever the way of reading and of changing")
struct ObservationTrackingTests {
    struct Parent: Equatable, Sendable, Codable {
        var count = 0
        var child: Int? = 0
        var inner = Inner()
    }

    struct Inner: Equatable, Sendable, Codable {
        var value = 0
    }

    // @unchecked: `@Listenable`'s storage is a `StateContainer`, thread-safe; the wrapper is never reassigned.
    final class Profile: @unchecked Sendable {
        @Listenable var name = "NIX"
    }

    // @unchecked: each Box is read and changed only by the one thread that made it (each test's thread, or each of
    // the concurrent test's threads for its own subjects), never shared.
    final class Box: @unchecked Sendable {
        var text = ""
    }

    /// A read and a change: the change happens on another thread (or a persistence queue) when `async`.
    struct Path: Sendable, CustomStringConvertible {
        let description: String
        let make: @Sendable (_ name: String) -> (read: @Sendable () -> Void, change: @Sendable () -> Void)
    }

    static let paths: [Path] = [
        Path(description: "container modify") { name in
            let c = StateContainer(0, key: name)
            return ({ _ = c.value }, { c.modify(1) })
        },
        Path(description: "container ~>") { name in
            let c = StateContainer(0, key: name)
            return ({ _ = c.value }, { c ~> 1 })
        },
        Path(description: "container update") { name in
            let c = StateContainer(0, key: name)
            return ({ _ = c.value }, { c.update { $0 += 1 } })
        },
        Path(description: "container didModify") { name in
            let c = StateContainer(Box(), key: name)
            return ({ _ = c.value }, { c.value.text = "x"; c.didModify() })
        },
        Path(description: "Listenable") { _ in
            let profile = Profile()
            return ({ _ = profile.name }, { profile.name = "changed" })
        },
        Path(description: "transactional update") { name in
            let c = StateContainer(
                0, key: name, storage: InMemoryStorage().withoutNotifications, codec: .json, writes: .writeThrough,
                externalChanges: .ignore
            )
            return ({ _ = c.value }, { c.update { $0 += 1 } })
        },
        Path(description: "store dispatch") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, _: Int) in state.count += 1 }
            return ({ _ = s.state }, { s.dispatch(1) })
        },
        Path(description: "store dispatch from another thread") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, _: Int) in state.count += 1 }
            return ({ _ = s.state }, { Thread.detachNewThread { s.dispatch(1) } })
        },
        Path(description: "store travel") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, _: Int) in state.count += 1 }
            s.startRecording()
            s.dispatch(1)
            return ({ _ = s.state }, { try? s.travel(to: 0) })
        },
        Path(description: "store replay") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, _: Int) in state.count += 1 }
            s.startRecording()
            s.dispatch(1)
            s.dispatch(1)
            let recording = s.stopRecording()!
            try? s.travel(to: 0)
            return ({ _ = s.state }, { try? s.replay(recording) })
        },
        Path(description: "scope, not following") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, _: Int) in state.inner.value += 1 }
            let scope = s.scope(state: \.inner, action: { (_: Int) in 1 })
            return ({ _ = scope.state }, { s.dispatch(1) })
        },
        Path(description: "scope, following") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, _: Int) in state.inner.value += 1 }
            let scope = s.scope(state: \.inner, action: { (_: Int) in 1 })
            let token = scope.subscribe { _ in }
            return ({ _ = scope.state; withExtendedLifetime(token) {} }, { scope.dispatch(1) })
        },
        Path(description: "scope of a scope") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, _: Int) in state.inner.value += 1 }
            let scope = s.scope(state: \.inner, action: { (_: Int) in 1 }).scope(state: \.value, action: { $0 })
            return ({ _ = scope.state }, { s.dispatch(1) })
        },
        Path(description: "ifLet scope") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, _: Int) in state.child? += 1 }
            let scope = s.scope(ifLet: \.child, action: { (_: Int) in 1 })!
            return ({ _ = scope.state }, { s.dispatch(1) })
        },
        Path(description: "ifLet scope set to nil and back") { _ in
            let s = Store(initialState: Parent()) { (state: inout Parent, action: Int) in
                state.child = action < 0 ? nil : action
            }
            let scope = s.scope(ifLet: \.child, action: { (_: Int) in 1 })!
            return ({ _ = scope.state }, { s.dispatch(-1); s.dispatch(7) })
        },
        Path(description: "persisted store takes an outside state") { name in
            let storage = InMemoryStorage().withoutNotifications
            let s = Store(
                initialState: Parent(), key: name, storage: storage, codec: .json, writes: .writeThrough,
                externalChanges: .poll(every: .milliseconds(2)),
                reducer: { (state: inout Parent, _: Int) in state.count += 1; return .none }, middleware: []
            )
            return ({ _ = s.state }, {
                try? storage.save(Data(#"{"count": 9, "child": 0, "inner": {"value": 0}}"#.utf8), key: name)
            })
        },
        Path(description: "persisted container takes an outside value") { name in
            let storage = InMemoryStorage().withoutNotifications
            let c = StateContainer(
                0, key: name, storage: storage, codec: .json, writes: .writeThrough,
                externalChanges: .poll(every: .milliseconds(2))
            )
            return ({ _ = c.value }, { try? storage.save(Data("9".utf8), key: name) })
        },
    ]

    /// The first tracked read hears the next change.
    @Test(arguments: paths)
    func theFirstTrackedReadHearsTheNextChange(through path: Path) async {
        let (read, change) = path.make("observation.first.\(path.description)")
        let fired = Atomic<Int>(0)
        withObservationTracking { read() } onChange: { fired.add(1, ordering: .relaxed) }
        change()
        #expect(await eventually { fired.load(ordering: .relaxed) == 1 })
    }

    /// Tracking nested in another: the outer tracking hears a change of what only the inner one read.
    @Test(arguments: paths)
    func anOuterTrackingHearsWhatANestedOneRead(through path: Path) async {
        let (read, change) = path.make("observation.nested.\(path.description)")
        let outer = Atomic<Int>(0)
        let inner = Atomic<Int>(0)
        withObservationTracking {
            withObservationTracking { read() } onChange: { inner.add(1, ordering: .relaxed) }
        } onChange: { outer.add(1, ordering: .relaxed) }
        change()
        #expect(await eventually {
            outer.load(ordering: .relaxed) == 1 && inner.load(ordering: .relaxed) == 1
        })
    }

    /// Read untracked many times first (the probe's count does not move), then tracked once.
    @Test(arguments: paths)
    func manyUntrackedReadsThenATrackedOne(through path: Path) async {
        let (read, change) = path.make("observation.many.\(path.description)")
        for _ in 0..<20_000 { read() }
        let fired = Atomic<Int>(0)
        withObservationTracking { read() } onChange: { fired.add(1, ordering: .relaxed) }
        change()
        #expect(await eventually { fired.load(ordering: .relaxed) == 1 })
    }

    /// Many subjects made and tracked at once on several threads, all hashing the one probe counter: each thread's
    /// first tracked read of its own subject must still hear that subject's next change, made on another thread.
    @Test func subjectsTrackedConcurrentlyEachHearTheirNextChange() async {
        let missed = Atomic<Int>(0)
        let subjects = Self.paths.filter { !$0.description.contains("persisted") }
        await onNewThreads(4) { thread in
            for round in 0..<60 {
                let path = subjects[(thread + round) % subjects.count]
                let (read, change) = path.make("observation.concurrent.\(thread).\(round)")
                for _ in 0..<(round % 3) * 100 { read() }
                let fired = Atomic<Bool>(false)
                withObservationTracking { read() } onChange: { fired.store(true, ordering: .relaxed) }
                let other = Thread { change() }
                other.start()
                let deadline = ContinuousClock.now + .seconds(30)
                while !fired.load(ordering: .relaxed), ContinuousClock.now < deadline { sched_yield() }
                if !fired.load(ordering: .relaxed) { missed.add(1, ordering: .relaxed) }
            }
        }
        #expect(missed.load(ordering: .relaxed) == 0)
    }

    /// A subject written without pause by three threads while a fourth makes its first tracked read: a change made
    /// after the tracking is registered is heard.
    @Test func aFirstTrackingAmidSeveralWritersHearsTheNextChange() async {
        let missed = Atomic<Int>(0)
        for round in 0..<100 {
            let container = StateContainer(0, key: "observation.writers.\(round)")
            let registered = Atomic<Bool>(false)
            let fired = Atomic<Bool>(false)
            await onNewThreads(4) { thread in
                if thread == 0 {
                    withObservationTracking { _ = container.value } onChange: { fired.store(true, ordering: .relaxed) }
                    registered.store(true, ordering: .releasing)
                } else {
                    while !registered.load(ordering: .acquiring) { container.update { $0 += 1 } }
                    container.modify(-thread)
                }
            }
            if !fired.load(ordering: .relaxed) { missed.add(1, ordering: .relaxed) }
        }
        #expect(missed.load(ordering: .relaxed) == 0)
    }
}
