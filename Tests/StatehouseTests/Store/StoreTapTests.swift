import Dispatch
import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// What a tap saw, reduced to what the tests compare.
private enum Seen: Equatable, Sendable {
    case action(CounterAction, ActionSource, count: Int)
    case replaced(StateReplacement, count: Int)

    init(_ event: StoreEvent<Counter, CounterAction>) {
        switch event.kind {
        case .action(let action, let source): self = .action(action, source, count: event.state.count)
        case .replaced(let replacement): self = .replaced(replacement, count: event.state.count)
        }
    }
}

private func tapped(_ store: Store<Counter, CounterAction>) -> (Recorder<Seen>, StoreTap) {
    let seen = Recorder<Seen>()
    return (seen, store.tap { seen.append(Seen($0)) }.tap)
}

/// A store's tap sees every action with where it came from and the state it left, and every whole replacement of the
/// state, in the store's order: what the inspector builds its log and its diffs on.
@Suite("A store's tap: every change, its source and the state it left")
struct StoreTapTests {
    @Test func everyActionArrivesWithTheStateItLeft() {
        let store = makeCounterStore()
        let (seen, tap) = tapped(store)
        store.dispatch(.increment)
        store.dispatch(.set(5))
        store.dispatch(.rename("five"))
        #expect(seen.elements == [
            .action(.increment, .dispatch, count: 1), .action(.set(5), .dispatch, count: 5),
            .action(.rename("five"), .dispatch, count: 5),
        ])
        tap.cancel()
        store.dispatch(.increment)
        #expect(seen.elements.count == 3)
    }

    @Test func anEffectsActionAndANamedMiddlewaresAreTold() async {
        let doubler = Middleware<Counter, CounterAction>(name: "doubler") { store, action, next in
            next(action)
            if case .set(let value) = action, value < 100 { store.dispatch(.set(value * 2)) }
        }
        let anonymous = Middleware<Counter, CounterAction> { store, action, next in
            next(action)
            if action == .rename("again") { store.dispatch(.increment) }
        }
        let store = Store<Counter, CounterAction>(
            initialState: Counter(),
            reducer: { state, action in
                counterReducer(&state, action)
                return action == .rename("effect") ? .send(.rename("again")) : .none
            },
            middleware: [doubler, anonymous]
        )
        let (seen, tap) = tapped(store)
        store.dispatch(.set(60))
        store.dispatch(.rename("effect"))
        #expect(await eventually { seen.elements.count == 5 })
        #expect(seen.elements == [
            .action(.set(60), .dispatch, count: 60), .action(.set(120), .middleware("doubler"), count: 120),
            .action(.rename("effect"), .dispatch, count: 120), .action(.rename("again"), .effect, count: 120),
            .action(.increment, .dispatch, count: 121),
        ])
        withExtendedLifetime(tap) {}
    }

    @Test func aRecordingNotesTheEffectsActionsAsBefore() async {
        let store = Store<Counter, CounterAction>(initialState: Counter()) { state, action in
            counterReducer(&state, action)
            return action == .increment ? .send(.rename("sent")) : .none
        }
        store.startRecording()
        let (_, tap) = tapped(store)
        store.dispatch(.increment)
        #expect(await eventually { store.recording?.actions.count == 2 })
        #expect(store.recording?.actions.map(\.sentByEffect) == [false, true])
        tap.cancel()
    }

    @Test func undoRedoTravelAndJumpAreReplacements() throws {
        let store = Store<Counter, CounterAction>(
            initialState: Counter(), reducer: counterReducer, undo: UndoPolicy { $0 == .increment }
        )
        let (seen, tap) = tapped(store)
        store.dispatch(.increment)
        store.undo()
        store.redo()
        try store.jump(to: Counter(count: 40))
        store.startRecording()
        store.dispatch(.increment)
        try store.travel(to: 0)
        #expect(seen.elements == [
            .action(.increment, .dispatch, count: 1), .replaced(.undo, count: 0), .replaced(.redo, count: 1),
            .replaced(.travel, count: 40), .action(.increment, .dispatch, count: 41), .replaced(.travel, count: 40),
        ])
        #expect(store.state.count == 40)
        tap.cancel()
    }

    @Test func aStateAnotherProcessStoredIsAReplacementFromStorage() async throws {
        let directory = TemporaryDirectory()
        let store = Store(
            initialState: Counter(), key: "tap.store", storage: .file(directory: directory.url),
            externalChanges: onlyPush, reducer: counterReducer
        )
        let (seen, tap) = tapped(store)
        try FileStorage(directory: directory.url).save(try JSONEncoder().encode(Counter(count: 7)), key: "tap.store")
        #expect(await eventually { seen.elements == [.replaced(.storage, count: 7)] })
        tap.cancel()
    }

    @Test func aPersistedStoreRefusesAJump() {
        let store = Store(
            initialState: Counter(), key: "tap.persisted", storage: InMemoryStorage(), reducer: counterReducer
        )
        #expect(store.isPersisted && !makeCounterStore().isPersisted)
        #expect(throws: TimeTravelError.persisted) { try store.jump(to: Counter(count: 3)) }
        #expect(store.state.count == 0)
    }

    @Test func replayingGivesEveryStateAndLeavesTheStoreAlone() throws {
        let store = makeCounterStore(Counter(count: 100))
        let recording = Recording<Counter, CounterAction>(
            initialState: Counter(), actions: [.init(date: Date(), action: .increment), .init(date: Date(), action: .set(9))]
        )
        var visited: [Int] = []
        try store.forEachState(replaying: recording) { step, state in
            #expect(step == visited.count)
            visited.append(state.count)
        }
        #expect(visited == [0, 1, 9])
        #expect(store.state.count == 100)
        let scoped = store.scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
        #expect(throws: TimeTravelError.notRecording) {
            try scoped.forEachState(replaying: Recording(initialState: 0, actions: [])) { _, _ in }
        }
    }

    /// Many threads dispatch while taps come and go: each tap sees a gapless run of the store's states, each action
    /// once, and a tap added mid-run starts right after the state read when it was added.
    @Test(arguments: 0..<3)
    func underContentionEveryTapSeesAGaplessRunOfStates(round: Int) async {
        let store = makeCounterStore()
        let threads = 4, perThread = 2_000
        let (whole, wholeTap) = tapped(store)
        let done = (0..<threads).map { _ in
            onAThreadOfItsOwn { for _ in 0..<perThread { store.dispatch(.increment) } }
        }
        var lateTaps: [(Recorder<Seen>, StoreTap, startedAt: Int)] = []
        for _ in 0..<20 {
            let seen = Recorder<Seen>()
            let (tap, state) = store.tap { seen.append(Seen($0)) }
            lateTaps.append((seen, tap, state.count))
            try? await Task.sleep(for: .milliseconds(1))
        }
        for semaphore in done { semaphore.wait() }
        let total = threads * perThread
        #expect(whole.elements.map { if case .action(_, _, let count) = $0 { count } else { -1 } } == Array(1...total))
        for (seen, tap, startedAt) in lateTaps {
            tap.cancel()
            let counts = seen.elements.map { if case .action(_, _, let count) = $0 { count } else { -1 } }
            #expect(counts == Array((startedAt + 1)..<(startedAt + 1 + counts.count)))
        }
        wholeTap.cancel()
    }

    /// A scoped store's actions are its root's: its own tap starts from its state (read through the parent, as it
    /// follows nothing yet) and sees nothing, and it says it is scoped.
    @Test func aScopedStoresTapStartsFromItsStateAndItSaysItIsScoped() {
        let root = makeCounterStore(Counter(count: 7))
        let scope = root.scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
        let (tap, state) = scope.tap { _ in }
        #expect(state == 7 && scope.isScoped && !root.isScoped)
        tap.cancel()
    }

    /// Cancel races a call in flight, 200 times: once `cancel` returns, no call is under way and none starts.
    @Test func aCancelledTapIsNotBeingCalledOnceCancelReturns() {
        for _ in 0..<200 {
            let store = makeCounterStore()
            let inside = Locked(0)
            let calls = Locked(0)
            let called = DispatchSemaphore(value: 0)
            let (tap, _) = store.tap { _ in
                inside.withLock { $0 += 1 }
                if calls.withLock({ $0 += 1; return $0 }) == 1 { called.signal() }
                inside.withLock { $0 -= 1 }
            }
            let dispatching = onAThreadOfItsOwn { for _ in 0..<2_000 { store.dispatch(.increment) } }
            called.wait()
            tap.cancel()
            let insideAfterCancel = inside.withLock { $0 }
            let callsAfterCancel = calls.withLock { $0 }
            dispatching.wait()
            #expect(insideAfterCancel == 0)
            #expect(calls.withLock { $0 } == callsAfterCancel)
        }
    }

    @Test func aTapLetGoIsRemovedAndAStoreLetGoEndsItsTaps() {
        var store: Store<Counter, CounterAction>? = makeCounterStore()
        weak let weakStore = store
        let seen = Recorder<Seen>()
        var tap: StoreTap? = store!.tap { seen.append(Seen($0)) }.tap
        store!.dispatch(.increment)
        tap = nil
        store!.dispatch(.increment)
        #expect(seen.elements.count == 1)
        tap = store!.tap { seen.append(Seen($0)) }.tap
        store = nil
        #expect(weakStore == nil)
        tap?.cancel()
        tap = nil
    }
}

/// What the inspector shows of a container: how many listen, and whether its last change came from storage.
@Suite("A container's activity")
struct ContainerActivityTests {
    @Test func countsListenersAndChanges() {
        let container = StateContainer(0, key: "activity.count")
        #expect(container.activity == ContainerActivity(changeCount: 0, listenerCount: 0, lastChangeCameFromStorage: false))
        let first = container.observe { _ in }
        container.bind(name: "label") { _ in }
        container.modify(1)
        #expect(container.activity == ContainerActivity(changeCount: 1, listenerCount: 2, lastChangeCameFromStorage: false))
        first.cancel()
        container.unbind(name: "label")
        #expect(container.activity.listenerCount == 0)
    }

    @Test func aValueAnotherProcessStoredIsMarkedAsSuchUntilTheNextLocalChange() async throws {
        let directory = TemporaryDirectory()
        let (container, _, token) = followed("activity.stored", in: directory)
        #expect(try await fileWorker(directory, "activity.stored", "set", "41"))
        #expect(await eventually { container.value == 41 })
        #expect(container.activity.lastChangeCameFromStorage)
        container.modify(42)
        #expect(!container.activity.lastChangeCameFromStorage)
        token.cancel()
    }
}
