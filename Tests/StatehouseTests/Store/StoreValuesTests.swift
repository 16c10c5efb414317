import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A state that is not `Equatable`: every dispatch counts as a change.
private struct Tally: Sendable {
    var total = 0
}

private enum TallyAction: Sendable {
    case add(Int)
    case nothing
}

private func makeTallyStore() -> Store<Tally, TallyAction> {
    Store(initialState: Tally()) { (state: inout Tally, action: TallyAction) in
        if case .add(let amount) = action { state.total += amount }
    }
}

/// Whether `store` holds no subscriber any more.
private func hasNoSubscribers<State, Action>(_ store: Store<State, Action>) -> Bool {
    store.core.withLock { $0.groups.compactMap { $0 }.allSatisfy { $0.subscribers.isEmpty } }
}

/// What `stream` yields up to the first element that `isLast` accepts. A sequence keeps its store alive, so a test
/// ends what it reads with a change of its own (a sentinel) rather than with the store's end.
private func collect<Element>(_ stream: AsyncStream<Element>, through isLast: (Element) -> Bool) async -> [Element] {
    var elements: [Element] = []
    for await element in stream {
        elements.append(element)
        if isLast(element) { break }
    }
    return elements
}

/// Serialized: the ordering tests block threads dispatching (see DESIGN.md, "Swift notes").
@Suite("Store: values as an async sequence", .serialized)
struct StoreValuesTests {
    static let threads = 4
    static let iterations = 2_000

    // MARK: First value and skipping repeats

    @Test func theFirstValueIsTheCurrentOne() async {
        let store = makeCounterStore(Counter(count: 3, name: "three"))
        var counts = store.values(\.count).makeAsyncIterator()
        var states = store.values.makeAsyncIterator()
        var names = store.values(select: { $0.name }, isDuplicate: ==).makeAsyncIterator()
        #expect(await counts.next() == 3)
        #expect(await states.next() == Counter(count: 3, name: "three"))
        #expect(await names.next() == "three")
    }

    @Test func aKeyPathNeverYieldsTheSameValueTwiceInARow() async {
        let store = makeCounterStore()
        let counts = store.values(\.count)
        store.dispatch(.increment)
        store.dispatch(.rename("clicks"))
        store.dispatch(.set(1))
        store.dispatch(.set(5))
        store.dispatch(.set(99))
        #expect(await collect(counts) { $0 == 99 } == [0, 1, 5, 99])
    }

    @Test func selectYieldsOnlyWhatIsDuplicateCallsNew() async {
        let store = makeCounterStore()
        let pairs = store.values(select: { ($0.count, $0.name) }, isDuplicate: ==)
        let tens = store.values(select: { $0.count }, isDuplicate: { $0 / 10 == $1 / 10 })
        store.dispatch(.increment)
        store.dispatch(.set(1))
        store.dispatch(.rename("a"))
        store.dispatch(.set(12))
        store.dispatch(.set(15))
        store.dispatch(.set(3))
        store.dispatch(.set(99))
        let names = await collect(pairs) { $0.0 == 99 }.map { "\($0.0) \($0.1)" }
        #expect(names == ["0 ", "1 ", "1 a", "12 a", "15 a", "3 a", "99 a"])
        #expect(await collect(tens) { $0 == 99 } == [0, 12, 3, 99])
    }

    @Test func theWholeStateSkipsDispatchesThatChangedNothing() async {
        let store = makeCounterStore()
        let states = store.values
        store.dispatch(.set(0))
        store.dispatch(.increment)
        store.dispatch(.rename(""))
        store.dispatch(.set(99))
        #expect(await collect(states) { $0.count == 99 }.map(\.count) == [0, 1, 99])
    }

    @Test func aStateThatIsNotEquatableYieldsAfterEveryDispatch() async {
        let store = makeTallyStore()
        let totals = store.values
        let bounded = store.values(bufferingPolicy: .bufferingNewest(1))
        store.dispatch(.add(2))
        store.dispatch(.nothing)
        store.dispatch(.add(3))
        store.dispatch(.add(100))
        #expect(await collect(totals) { $0.total == 105 }.map(\.total) == [0, 2, 2, 5, 105])
        #expect(await collect(bounded) { $0.total == 105 }.map(\.total) == [105])
    }

    // MARK: Order

    @Test func manyDispatchingThreadsYieldEveryValueInOrderEndingWithTheLast() async {
        let total = Self.threads * Self.iterations
        let consuming: Task<[Int], Never>
        let states: AsyncStream<Counter>
        do {
            let store = makeCounterStore()
            let counts = store.values(\.count)
            states = store.values(bufferingPolicy: .bufferingNewest(1))
            // Consumed while the threads dispatch, through the last value (which the processor, perhaps on a
            // thread of its own, may deliver after the dispatching threads returned).
            consuming = Task { await collect(counts) { $0 == total } }
            await onNewThreads(Self.threads) { _ in
                for _ in 0..<Self.iterations { store.dispatch(.increment) }
            }
        }
        #expect(await consuming.value == Array(0...total))
        let newest = await collect(states) { $0.count == total }.map(\.count)
        #expect(newest.last == total)
        #expect(zip(newest, newest.dropFirst()).allSatisfy { $0 < $1 })
    }

    @Test func bufferingNewestOneCatchesUpWithTheLastValue() async {
        let store = makeCounterStore()
        var counts = store.values(\.count, bufferingPolicy: .bufferingNewest(1)).makeAsyncIterator()
        #expect(await counts.next() == 0)
        for value in 1...10 { store.dispatch(.set(value)) }
        #expect(await counts.next() == 10)
        store.dispatch(.increment)
        #expect(await counts.next() == 11)
    }

    @Test func bufferingNewestOneEndsOnTheLastValueUnderManyDispatchers() async {
        let total = Self.threads * Self.iterations
        let pairs: AsyncStream<Int>
        do {
            let store = makeCounterStore()
            pairs = store.values(
                select: { $0.count }, isDuplicate: ==, bufferingPolicy: .bufferingNewest(1)
            )
            await onNewThreads(Self.threads) { _ in
                for _ in 0..<Self.iterations { store.dispatch(.increment) }
            }
        }
        let received = await collect(pairs) { $0 == total }
        #expect(received.last == total)
        #expect(zip(received, received.dropFirst()).allSatisfy { $0 < $1 })
    }

    // MARK: Ending

    @Test func leavingTheLoopEndsTheSubscription() async {
        let store = makeCounterStore()
        for await count in store.values(\.count) where count == 0 { break }
        #expect(await eventually { hasNoSubscribers(store) })
    }

    @Test func cancellingTheConsumingTaskEndsTheSubscription() async {
        let store = makeCounterStore()
        let seen = Recorder<Int>()
        let consuming = Task {
            for await count in store.values(\.count) { seen.append(count) }
        }
        #expect(await eventually { seen.count == 1 })
        #expect(!hasNoSubscribers(store))
        consuming.cancel()
        await consuming.value
        #expect(await eventually { hasNoSubscribers(store) })
        store.dispatch(.increment)
        #expect(seen.elements == [0])
    }

    @Test func droppingTheSequenceEndsTheSubscription() async {
        let store = makeCounterStore()
        do {
            var counts = store.values(\.count).makeAsyncIterator()
            #expect(await counts.next() == 0)
        }
        #expect(await eventually { hasNoSubscribers(store) })
    }

    /// Like a token, a sequence keeps its store alive: a loop over a store nobody else holds keeps getting values,
    /// and ending the loop lets the store go.
    @Test func theSequenceKeepsItsStoreAliveUntilTheLoopEnds() async {
        let holder = Locked<Store<Counter, CounterAction>?>(makeCounterStore())
        let counts = holder.withLock { $0!.values(\.count) }
        let seen = Recorder<Int>()
        let consuming = Task {
            for await count in counts { seen.append(count) }
        }
        #expect(await eventually { seen.count == 1 })
        weak let weakStore = holder.withLock { $0 }
        holder.withLock { $0 = nil }
        #expect(weakStore != nil)
        weakStore?.dispatch(.increment)
        #expect(await eventually { seen.count == 2 })
        consuming.cancel()
        await consuming.value
        #expect(await eventually { weakStore == nil })
        #expect(seen.elements == [0, 1])
    }

    @Test func droppingEveryVariantLetsItsStoreGo() async {
        var counters: Store<Counter, CounterAction>? = makeCounterStore()
        var tallies: Store<Tally, TallyAction>? = makeTallyStore()
        weak let weakCounters = counters
        weak let weakTallies = tallies
        var states: AsyncStream<Counter>? = counters!.values
        var selections: AsyncStream<String>? = counters!.values(select: { $0.name }, isDuplicate: ==)
        var tallyStates: AsyncStream<Tally>? = tallies!.values
        counters = nil
        tallies = nil
        #expect(weakCounters != nil && weakTallies != nil)
        #expect(await states?.first { _ in true } == Counter())
        states = nil
        selections = nil
        tallyStates = nil
        withExtendedLifetime((states, selections, tallyStates)) {}
        #expect(await eventually { weakCounters == nil && weakTallies == nil })
    }
}
