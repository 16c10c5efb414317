import Foundation
import Statehouse
import StatehouseTesting
import Testing  // TestStore's default arguments use its `#_sourceLocation`

/// A state with ten fields that subscribers watch and one (`clicks`) that the benchmark action changes, so that
/// no subscriber's selection changes.
struct Fields: Equatable, Sendable {
    var f0 = 0, f1 = 0, f2 = 0, f3 = 0, f4 = 0, f5 = 0, f6 = 0, f7 = 0, f8 = 0, f9 = 0
    var clicks = 0
}

let watchedFields: [KeyPath<Fields, Int> & Sendable] = [\.f0, \.f1, \.f2, \.f3, \.f4, \.f5, \.f6, \.f7, \.f8, \.f9]

func click(_ state: inout Fields, _ action: Int) {
    state.clicks &+= action
}

/// Changes every watched field, so that every subscriber's selection changes.
func bumpAll(_ state: inout Fields, _ action: Int) {
    state.f0 &+= action; state.f1 &+= action; state.f2 &+= action; state.f3 &+= action; state.f4 &+= action
    state.f5 &+= action; state.f6 &+= action; state.f7 &+= action; state.f8 &+= action; state.f9 &+= action
}

func storeTable(budget: Duration) async -> Table {
    var table = Table(title: "Store", columns: ["Statehouse", "naive store"])
    let sink = ObserverSink()

    func dispatchCost(
        subscribers: Int,
        reducer: @escaping @Sendable (inout Fields, Int) -> Void = click
    ) -> (ours: Double, naive: Double) {
        let (store, naive, tokens) = storesWithSubscribers(subscribers, reducer: reducer, sink: sink)
        let ours = nanosecondsPerCall(budget: budget) { store.dispatch($0) }
        let theirs = nanosecondsPerCall(budget: budget) { naive.dispatch($0) }
        withExtendedLifetime(tokens) {}
        return (ours, theirs)
    }

    let empty = dispatchCost(subscribers: 0)
    table.add("dispatch, 0 subscribers", unit: "ns", cells: [Cell(value: empty.ours), Cell(value: empty.naive)], target: "≤ 40 ns")
    for count in [100, 1_000] {
        let cost = dispatchCost(subscribers: count)
        table.add(
            "dispatch, \(count) unchanged subscribers on 10 key paths, per subscriber", unit: "ns",
            cells: [Cell(value: (cost.ours - empty.ours) / Double(count)), Cell(value: (cost.naive - empty.naive) / Double(count))],
            target: count == 100 ? "≤ 10 ns" : ""
        )
    }
    // Several threads dispatching to one store at once: every `dispatch` returns with its action applied, against a
    // store that applies each under a `Mutex` (which also reads its own write).
    for threads in [2, 4] {
        let store = Store(initialState: Fields(), reducer: click)
        let naive = NaiveStore(initialState: Fields(), reducer: click)
        table.add(
            "dispatch, \(threads) threads at once, 0 subscribers, per action", unit: "ns",
            cells: [
                Cell(value: contendedDispatch(threads: threads) { store.dispatch($0) }),
                Cell(value: contendedDispatch(threads: threads) { naive.dispatch($0) }),
            ],
            target: "≤ 2× the naive store"
        )
    }
    // Every subscriber's value changes: each group selects once, and each subscriber is called.
    let emptyBumping = dispatchCost(subscribers: 0, reducer: bumpAll)
    let bumping = dispatchCost(subscribers: 100, reducer: bumpAll)
    table.add(
        "dispatch, 100 changed subscribers on 10 key paths, per subscriber", unit: "ns",
        cells: [
            Cell(value: (bumping.ours - emptyBumping.ours) / 100),
            Cell(value: (bumping.naive - emptyBumping.naive) / 100),
        ],
        target: ""
    )
    // A scoped store nobody subscribes to (a view that made one and shows nothing yet): the naive store has no
    // scopes, so its column is a dispatch with nothing to tell.
    let scoped = dispatchWithAnIdleScope(budget: budget)
    table.add(
        "dispatch, a scope with no subscribers", unit: "ns",
        cells: [Cell(value: scoped), Cell(value: empty.naive)], target: ""
    )
    // The same idle scope's `state`, which reads through its parent: against reading the part by hand, the state
    // under a lock and then the key path.
    table.add(
        "read a scope's state, no subscribers", unit: "ns",
        cells: scopedStateRead(budget: budget, sink: sink).map { Cell(value: $0) }, target: ""
    )
    for count in [100, 10_000] {
        table.add(
            "subscribe + unsubscribe with \(count) subscribers", unit: "ns",
            cells: subscribeCost(existing: count, budget: budget, sink: sink).map { Cell(value: $0) },
            target: "≤ 300 ns, flat"
        )
    }
    let testStore = await testStoreOverhead(budget: budget)
    table.add("TestStore.send vs Store.dispatch", unit: "ns", cells: [Cell(value: testStore.dispatch), Cell(value: testStore.send)], target: "")
    return table
}

/// `threads` threads each dispatch `perThread` actions through `dispatch`, all at once: the median over `runs` of the
/// time per action, all threads' actions counted.
private func contendedDispatch(
    threads: Int, perThread: Int = 100_000, runs: Int = 5, _ dispatch: @escaping @Sendable (Int) -> Void
) -> Double {
    let times = (0..<runs).map { _ in
        let done = DispatchGroup()
        let start = ContinuousClock.now
        for _ in 0..<threads {
            done.enter()
            Thread.detachNewThread {
                for action in 0..<perThread { dispatch(action) }
                done.leave()
            }
        }
        done.wait()
        return nanoseconds(ContinuousClock.now - start) / Double(threads * perThread)
    }
    return times.sorted()[runs / 2]
}

/// A Statehouse store and a naive one, each with `count` subscribers spread over the ten watched fields.
private func storesWithSubscribers(
    _ count: Int,
    reducer: @escaping @Sendable (inout Fields, Int) -> Void = click,
    sink: ObserverSink
) -> (Store<Fields, Int>, NaiveStore<Fields, Int>, [SubscriptionToken]) {
    let store = Store(initialState: Fields(), reducer: reducer)
    let naive = NaiveStore(initialState: Fields(), reducer: reducer)
    var tokens: [SubscriptionToken] = []
    for index in 0..<count {
        let field = watchedFields[index % watchedFields.count]
        tokens.append(store.subscribe(field) { sink.total &+= $0 })
        _ = naive.subscribe(field) { sink.total &+= $0 }
    }
    return (store, naive, tokens)
}

/// A dispatch to a store that has one scoped store, with no subscriber anywhere.
private func dispatchWithAnIdleScope(budget: Duration) -> Double {
    let store = Store(initialState: Fields(), reducer: click)
    let scope = store.scope(state: \.f0, action: { (action: Int) in action })
    let cost = nanosecondsPerCall(budget: budget) { store.dispatch($0) }
    withExtendedLifetime(scope) {}
    return cost
}

/// Reading the `state` of a scoped store that has no subscribers, against reading the same part of a naive store.
private func scopedStateRead(budget: Duration, sink: ObserverSink) -> [Double] {
    let store = Store(initialState: Fields(), reducer: click)
    let scope = store.scope(state: \.f0, action: { (action: Int) in action })
    let naive = NaiveStore(initialState: Fields(), reducer: click)
    let ours = nanosecondsPerCall(budget: budget) { _ in sink.total &+= scope.state }
    let theirs = nanosecondsPerCall(budget: budget) { _ in sink.total &+= naive.state.f0 }
    return [ours, theirs]
}

/// Subscribing and unsubscribing one more subscriber while `existing` others are subscribed.
private func subscribeCost(existing: Int, budget: Duration, sink: ObserverSink) -> [Double] {
    let (store, naive, tokens) = storesWithSubscribers(existing, sink: sink)
    let ours = nanosecondsPerCall(budget: budget) { _ in
        store.subscribe(\.f0) { sink.total &+= $0 }.cancel()
    }
    let theirs = nanosecondsPerCall(budget: budget) { _ in
        naive.unsubscribe(naive.subscribe(\.f0) { sink.total &+= $0 })
    }
    withExtendedLifetime(tokens) {}
    return [ours, theirs]
}

/// One action through a `TestStore` (with its exhaustive check) against one `dispatch`.
private func testStoreOverhead(budget: Duration) async -> (dispatch: Double, send: Double) {
    let store = Store(initialState: Fields(), reducer: click)
    let dispatch = nanosecondsPerCall(budget: budget) { store.dispatch($0) }
    let testStore = TestStore(initialState: Fields(), reducer: click)
    let calls = 20_000
    let start = ContinuousClock.now
    for _ in 0..<calls {
        await testStore.send(1) { $0.clicks += 1 }
    }
    let send = nanoseconds(ContinuousClock.now - start) / Double(calls)
    return (dispatch, send)
}
