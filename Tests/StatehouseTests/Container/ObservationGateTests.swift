import Observation
import Statehouse
import StatehouseTestSupport
import Synchronization
import Testing

/// Containers and stores report changes to Observation only once a tracked read has happened (`ObservationGate`):
/// these tests check that no tracking misses a change the plain registrar would report, above all one that races
/// the very first tracked read.
@Suite struct ObservationGateTests {
    /// What a test tracks and changes: a container, a store, or a scope of a store.
    enum Subject: CaseIterable, Sendable {
        case container, store, scope

        /// A fresh subject named `name`: its value, and how to change it to a given number.
        func make(_ name: String) -> (read: @Sendable () -> Int, change: @Sendable (Int) -> Void) {
            switch self {
            case .container:
                let container = StateContainer(0, key: name)
                return ({ container.value }, { container.modify($0) })
            case .store:
                let store = Store(initialState: 0) { (state: inout Int, action: Int) in state = action }
                return ({ store.state }, { store.dispatch($0) })
            case .scope:
                let store = Store(initialState: Pair()) { (state: inout Pair, action: Int) in state.count = action }
                let scope = store.scope(state: \.count, action: { $0 })
                return ({ scope.state }, { store.dispatch($0) })
            }
        }
    }

    struct Pair: Equatable, Sendable {
        var count = 0
        var other = ""
    }

    @Test(arguments: Subject.allCases)
    func theFirstTrackedReadHearsTheNextChange(of subject: Subject) {
        let (read, change) = subject.make("gate.first.\(subject)")
        for _ in 0..<3 { _ = read() }  // untracked reads first: they must not make a later tracked one miss
        let fired = Atomic<Int>(0)
        _ = withObservationTracking { read() } onChange: { fired.add(1, ordering: .relaxed) }
        change(1)
        #expect(fired.load(ordering: .relaxed) == 1)
        _ = withObservationTracking { read() } onChange: { fired.add(1, ordering: .relaxed) }
        change(2)
        #expect(fired.load(ordering: .relaxed) == 2)
    }

    @Test(arguments: Subject.allCases)
    func aTrackingOfTwoSubjectsHearsEither(of subject: Subject) {
        let first = subject.make("gate.two.a.\(subject)")
        let second = subject.make("gate.two.b.\(subject)")
        let fired = Atomic<Int>(0)
        _ = withObservationTracking { first.read() + second.read() } onChange: { fired.add(1, ordering: .relaxed) }
        second.change(5)
        #expect(fired.load(ordering: .relaxed) == 1)
    }

    /// The window of the gate: a writer changes the subject without pause while another thread makes the subject's
    /// first tracked read. Every change made after the tracking is registered must be heard, whatever the writer's
    /// changes raced.
    @Test(arguments: Subject.allCases)
    func aChangeAfterTheFirstTrackingIsRegisteredIsNeverMissed(of subject: Subject) async {
        let rounds = 100  // 300 took 111 s under ThreadSanitizer beside the suite
        let missed = Atomic<Int>(0)
        for round in 0..<rounds {
            let (read, change) = subject.make("gate.race.\(subject).\(round)")
            let registered = Atomic<Bool>(false)
            let fired = Atomic<Bool>(false)
            await onNewThreads(2) { thread in
                if thread == 0 {
                    _ = withObservationTracking { read() } onChange: { fired.store(true, ordering: .relaxed) }
                    registered.store(true, ordering: .releasing)
                } else {
                    var next = 1
                    while !registered.load(ordering: .acquiring) {
                        change(next)
                        next += 1
                    }
                    change(-1)  // made after the registration: must be heard
                }
            }
            if !fired.load(ordering: .relaxed) { missed.add(1, ordering: .relaxed) }
        }
        #expect(missed.load(ordering: .relaxed) == 0)
    }

    @Test func observationsSequenceFollowsAFreshContainer() async {
        let container = StateContainer(0, key: "gate.observations")
        let values = Observations { container.value }
        var iterator = values.makeAsyncIterator()
        #expect(await iterator.next() == 0)
        container.modify(1)
        #expect(await iterator.next() == 1)
    }
}
