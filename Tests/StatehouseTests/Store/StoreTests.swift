import Foundation
import Observation
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("Store: actions, subscriptions, middleware")
struct StoreTests {
    @Test func designDocumentExampleCompilesAndWorks() {
        let store = Store(initialState: Counter()) { (state: inout Counter, action: CounterAction) in
            switch action {
            case .increment: state.count += 1
            case .set(let value): state.count = value
            case .rename(let name): state.name = name
            }
        }
        store.dispatch(.increment)
        #expect(store.state == Counter(count: 1))
    }

    @Test func keyPathSubscriberGetsTheCurrentValueThenOnlyChanges() {
        let store = makeCounterStore()
        let counts = Recorder<Int>()
        let token = store.subscribe(\.count) { counts.append($0) }
        store.dispatch(.increment)
        store.dispatch(.rename("clicks"))
        store.dispatch(.set(1))
        store.dispatch(.set(5))
        #expect(counts.elements == [0, 1, 5])
        token.cancel()
    }

    @Test func initialFalseSkipsTheCurrentValue() {
        let store = makeCounterStore()
        let counts = Recorder<Int>()
        let token = store.subscribe(\.count, initial: false) { counts.append($0) }
        store.dispatch(.increment)
        #expect(counts.elements == [1])
        token.cancel()
    }

    @Test func cancelledSubscriberHearsNothingAndCanResubscribe() {
        let store = makeCounterStore()
        let counts = Recorder<Int>()
        var token = store.subscribe(\.count) { counts.append($0) }
        token.cancel()
        store.dispatch(.increment)
        token = store.subscribe(\.count) { counts.append($0) }
        store.dispatch(.increment)
        #expect(counts.elements == [0, 1, 2])
        token.cancel()
    }

    @Test func closureSelectionWithIsDuplicate() {
        let store = makeCounterStore()
        let pairs = Recorder<String>()
        let token = store.subscribe(select: { ($0.count, $0.name) }, isDuplicate: ==) { pairs.append("\($0.0) \($0.1)") }
        store.dispatch(.increment)
        store.dispatch(.set(1))
        store.dispatch(.rename("a"))
        #expect(pairs.elements == ["0 ", "1 ", "1 a"])
        token.cancel()
    }

    @Test func skipRepeatsCanBeTurnedOff() {
        let store = makeCounterStore()
        let counts = Recorder<Int>()
        let token = store.subscribe(select: \.count, isDuplicate: { _, _ in false }) { counts.append($0) }
        store.dispatch(.rename("a"))
        store.dispatch(.rename("b"))
        #expect(counts.elements == [0, 0, 0])
        token.cancel()
    }

    @Test func wholeStateSubscriberSkipsDispatchesThatChangedNothing() {
        let store = makeCounterStore()
        let states = Recorder<Counter>()
        let token = store.subscribe { states.append($0) }
        store.dispatch(.set(0))
        store.dispatch(.increment)
        #expect(states.elements == [Counter(), Counter(count: 1)])
        token.cancel()
    }

    @Test func wholeStateOfANonEquatableStateIsDeliveredAfterEveryDispatch() {
        struct Plain: Sendable { var value = 0 }
        let store = Store(initialState: Plain()) { (state: inout Plain, value: Int) in state.value = value }
        let values = Recorder<Int>()
        let token = store.subscribe { values.append($0.value) }
        store.dispatch(0)
        store.dispatch(1)
        #expect(values.elements == [0, 0, 1])
        token.cancel()
    }

    @Test func subscribersOfOneKeyPathShareOneSelectionGroup() {
        let store = makeCounterStore()
        let tokens = (0..<500).map { _ in store.subscribe(\.count) { _ in } }
            + (0..<500).map { _ in store.subscribe(\.name) { _ in } }
        #expect(store.core.withLock { state in state.groups.compactMap { $0 }.count } == 2)
        tokens.forEach { $0.cancel() }
        let selection = store.subscribe(select: \.count, isDuplicate: ==) { _ in }
        #expect(store.core.withLock { state in state.groups.compactMap { $0 }.count } == 3)
        selection.cancel()
        // Key-path groups stay for the next subscriber; a selection of its own goes.
        #expect(store.core.withLock { state in state.groups.compactMap { $0 }.count } == 2)
    }

    @Test func aSubscriberJoiningAnEmptiedGroupGetsNoStaleDuplicate() {
        let store = makeCounterStore()
        store.subscribe(\.count) { _ in }.cancel()
        store.dispatch(.set(5))
        let counts = Recorder<Int>()
        let token = store.subscribe(\.count) { counts.append($0) }
        store.dispatch(.set(5))
        store.dispatch(.set(6))
        #expect(counts.elements == [5, 6])
        token.cancel()
    }

    /// A key-path object is found again by identity (`RecentKeyPaths`): once the group it led to is let go (its
    /// number free, or given to another key path), the same object must lead to a group of its own again.
    @Test func aKeyPathSeenBeforeItsGroupWasLetGoFindsItsOwnSelectionAgain() {
        struct Grid: Equatable, Sendable { var cells = (0..<64).map { $0 + 100 } }
        let store = Store(initialState: Grid()) { (state: inout Grid, action: (cell: Int, value: Int)) in
            state.cells[action.cell] = action.value
        }
        let watched: any KeyPath<Grid, Int> & Sendable = \Grid.cells[0]
        // Sixteen emptied key-path groups are kept; the seventeenth, the watched one's, lets them all go.
        for cell in 1...16 { store.subscribe(\.cells[cell]) { _ in }.cancel() }
        store.subscribe(watched) { _ in }.cancel()
        #expect(store.core.withLock { state in state.groupsByKey.isEmpty })
        let other = store.subscribe(\.cells[1]) { _ in }
        let seen = Recorder<Int>()
        let token = store.subscribe(watched) { seen.append($0) }
        store.dispatch((cell: 0, value: 7))
        store.dispatch((cell: 1, value: -1))
        #expect(seen.elements == [100, 7])
        token.cancel()
        other.cancel()
    }

    @Test func subscriberThatDispatchesDoesNotMakeLaterSubscribersSeeStaleOrDuplicateStates() {
        // ReSwift's open bug: the first subscriber dispatches 100 when it sees 42; the second then received
        // [0, 42, 42] and missed 100. Here the nested dispatch is queued until every subscriber has seen 42.
        let store = makeCounterStore()
        let first = store.subscribe(\.count) { count in if count == 42 { store.dispatch(.set(100)) } }
        let seen = Recorder<Int>()
        let second = store.subscribe(\.count) { seen.append($0) }
        store.dispatch(.set(42))
        #expect(seen.elements == [0, 42, 100])
        #expect(store.state.count == 100)
        withExtendedLifetime((first, second)) {}
    }

    @Test func nestedDispatchesRunFirstInFirstOut() {
        let order = Recorder<String>()
        let store = Store(initialState: Counter()) { (state: inout Counter, action: CounterAction) -> Effect<CounterAction> in
            order.append("\(action)")
            counterReducer(&state, action)
            return .none
        }
        let token = store.subscribe(\.count, initial: false) { count in
            if count == 1 {
                store.dispatch(.rename("a"))
                store.dispatch(.rename("b"))
            }
        }
        store.dispatch(.increment)
        #expect(order.elements == ["increment", "rename(\"a\")", "rename(\"b\")"])
        token.cancel()
    }

    @Test func reducerThatDispatchesIsQueuedNotReentered() {
        let box = Locked<Store<Counter, CounterAction>?>(nil)
        let store = Store(initialState: Counter()) { (state: inout Counter, action: CounterAction) -> Void in
            counterReducer(&state, action)
            if action == .increment, state.count < 3 { box.withLock { $0 }?.dispatch(.increment) }
        }
        box.withLock { $0 = store }
        store.dispatch(.increment)
        #expect(store.state.count == 3)
        box.withLock { $0 = nil }
    }

    // MARK: Middleware

    @Test func middlewareRunInOrderFirstOutermost() {
        let order = Recorder<String>()
        let tag = { (name: String) in
            Middleware<Counter, CounterAction> { _, action, next in
                order.append("\(name) before")
                next(action)
                order.append("\(name) after")
            }
        }
        let store = makeCounterStore(middleware: [tag("outer"), tag("inner")])
        store.dispatch(.increment)
        #expect(order.elements == ["outer before", "inner before", "inner after", "outer after"])
        #expect(store.state.count == 1)
    }

    @Test func middlewareCanSwallowTransformReadAndDispatch() {
        let stateSeen = Recorder<String>()
        let middleware = Middleware<Counter, CounterAction> { store, action, next in
            switch action {
            case .rename(let name) where name.isEmpty:
                return  // swallowed
            case .set(let value) where value < 0:
                next(.set(0))  // transformed
            case .increment:
                stateSeen.append("before \(store.state.count)")
                next(action)
                stateSeen.append("after \(store.state.count)")
                if store.state.count == 1 { store.dispatch(.rename("one")) }
            default:
                next(action)
            }
        }
        let store = makeCounterStore(middleware: [middleware])
        store.dispatch(.rename(""))
        store.dispatch(.set(-5))
        #expect(store.state == Counter(count: 0, name: ""))
        store.dispatch(.increment)
        #expect(stateSeen.elements == ["before 0", "after 1"])
        #expect(store.state == Counter(count: 1, name: "one"))
    }

    // MARK: Lifetimes and Observation

    /// A token keeps its store alive (a subscription that outlived its store would stop without a word), and the
    /// store, with what its listeners captured, ends with its last token.
    @Test func aTokenKeepsItsStoreAliveAndTheStoreEndsWithItsLastToken() {
        weak var weakStore: Store<Counter, CounterAction>?
        weak var weakWitness: Witness?
        var token: SubscriptionToken?
        do {
            let store = makeCounterStore()
            let witness = Witness()
            weakStore = store
            weakWitness = witness
            token = store.subscribe(\.count) { _ in withExtendedLifetime(witness) {} }
        }
        #expect(weakStore != nil)
        #expect(token?.isCancelled == false)
        token = nil
        #expect(weakStore == nil)
        #expect(weakWitness == nil, "the listener and what it captured went with the store")
    }

    @Test func observationTrackingFiresOnDispatch() {
        let store = makeCounterStore()
        let changes = Recorder<Bool>()
        _ = withObservationTracking { store.state.count } onChange: { changes.append(true) }
        store.dispatch(.increment)
        #expect(changes.count == 1)
    }

    @Test func queuedDeliveryKeepsOrder() async {
        let store = makeCounterStore()
        let queue = DispatchQueue(label: "test.store.queue", attributes: .concurrent)
        let counts = Recorder<Int>()
        let token = store.subscribe(\.count, on: .queue(queue)) { counts.append($0) }
        for _ in 0..<500 { store.dispatch(.increment) }
        #expect(await eventually { counts.elements.last == 500 })
        #expect(counts.elements == Array(0...500))
        token.cancel()
    }
}
