import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport
import StatehouseTesting

enum SearchAction: Equatable, Sendable {
    case search(String)
    case results(String)
    case cancel
    case ping
    case pong
    case both
}

struct Search: Equatable, Sendable {
    var query = ""
    var results: [String] = []
    var pongs = 0
}

/// A reducer with every kind of effect. The search waits `delay` on `clock` before it sends its results, so that a
/// test decides when that happens (a search cancelled first still tries to send, and must be ignored).
func searchReducer(
    clock: ManualClock = ManualClock(), delay: Duration = .zero
) -> @Sendable (inout Search, SearchAction) -> Effect<SearchAction> {
    { state, action in
        switch action {
        case .search(let query):
            state.query = query
            return .run { send in
                try? await clock.sleep(for: delay)
                send(.results(query))
            }
            .cancellable(id: "search", cancelInFlight: true)
        case .results(let query):
            state.results.append(query)
            return .none
        case .cancel:
            return .cancel(id: "search")
        case .ping:
            return .send(.pong)
        case .pong:
            state.pongs += 1
            return .none
        case .both:
            return .merge(.send(.pong), .run { send in send(.pong) })
        }
    }
}

@Suite("Store effects")
struct StoreEffectTests {
    @Test func sendDispatchesRightAfterTheCurrentAction() {
        let store = Store(initialState: Search(), reducer: searchReducer())
        store.dispatch(.ping)
        #expect(store.state.pongs == 1)
    }

    @Test func runSendsActionsBackAndTheStoreCanWaitForIt() async {
        let clock = ManualClock()
        let store = Store(initialState: Search(), reducer: searchReducer(clock: clock, delay: .seconds(1)))
        store.dispatch(.search("swift"))
        #expect(store.runningEffects == 1)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.results == ["swift"])
        #expect(store.runningEffects == 0)
    }

    @Test func mergeRunsEveryEffect() async {
        let store = Store(initialState: Search(), reducer: searchReducer())
        store.dispatch(.both)
        await store.finishEffects()
        #expect(store.state.pongs == 2)
    }

    @Test func cancelInFlightKeepsOnlyTheLatest() async {
        let clock = ManualClock()
        let store = Store(initialState: Search(), reducer: searchReducer(clock: clock, delay: .seconds(1)))
        store.dispatch(.search("a"))
        store.dispatch(.search("ab"))
        store.dispatch(.search("abc"))
        // The cancelled searches end at once (their sleeps throw) and try to send; the last one sleeps alone.
        #expect(await eventually { store.runningEffects == 1 && clock.sleepers() == 1 })
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.results == ["abc"])
    }

    @Test func cancelStopsTheEffectAndDropsWhatItWouldSend() async {
        // The clock never moves: only the cancellation ends the search, which then tries to send.
        let store = Store(initialState: Search(), reducer: searchReducer(clock: ManualClock(), delay: .seconds(1)))
        store.dispatch(.search("a"))
        store.dispatch(.cancel)
        await store.finishEffects()
        #expect(store.state.results.isEmpty)
    }
}

@Suite("Scoped stores")
struct ScopedStoreTests {
    struct App: Equatable, Sendable {
        var counter = Counter()
        var title = "app"
    }

    enum AppAction: Equatable, Sendable {
        case counter(CounterAction)
        case retitle(String)
    }

    static func appStore() -> Store<App, AppAction> {
        Store(initialState: App()) { (state: inout App, action: AppAction) in
            switch action {
            case .counter(let action): counterReducer(&state.counter, action)
            case .retitle(let title): state.title = title
            }
        }
    }

    @Test func childReadsTheParentsStateAndSendsThroughTheParent() {
        let app = Self.appStore()
        let child = app.scope(state: \.counter, action: AppAction.counter)
        child.dispatch(.increment)
        #expect(child.state.count == 1)
        #expect(app.state.counter.count == 1)
        app.dispatch(.counter(.set(7)))
        #expect(child.state.count == 7)
    }

    @Test func childSubscribersHearOnlyOfTheirPart() {
        let app = Self.appStore()
        let child = app.scope(state: \.counter, action: AppAction.counter)
        let counts = Recorder<Int>()
        let token = child.subscribe(\.count) { counts.append($0) }
        app.dispatch(.retitle("new"))
        child.dispatch(.increment)
        #expect(counts.elements == [0, 1])
        token.cancel()
    }

    @Test func aScopeOfAScopeWorks() {
        let app = Self.appStore()
        let counter = app.scope(state: \.counter, action: AppAction.counter)
        let name = counter.scope(state: \.name, action: CounterAction.rename)
        name.dispatch("deep")
        #expect(app.state.counter.name == "deep")
        #expect(name.state == "deep")
    }

    @Test func childKeepsTheParentAlive() {
        weak var weakApp: Store<App, AppAction>?
        var child: Store<Counter, CounterAction>?
        do {
            let app = Self.appStore()
            weakApp = app
            child = app.scope(state: \.counter, action: AppAction.counter)
        }
        #expect(weakApp != nil)
        child?.dispatch(.increment)
        #expect(weakApp?.state.counter.count == 1)
        child = nil
        #expect(weakApp == nil)
    }
}

@Suite("Recording, replay, time travel")
struct RecordingTests {
    @Test func replayingARecordingReproducesTheFinalState() async throws {
        let store = Store(initialState: Search(), reducer: searchReducer())
        store.dispatch(.search("before recording"))
        await store.finishEffects()
        store.startRecording()
        store.dispatch(.ping)
        store.dispatch(.search("swift"))
        await store.finishEffects()
        let recording = try #require(store.stopRecording())
        #expect(recording.actions.map(\.action) == [.ping, .pong, .search("swift"), .results("swift")])

        let replayed = Store(initialState: Search(), reducer: searchReducer())
        try replayed.replay(recording)
        #expect(replayed.state == store.state)
        #expect(replayed.runningEffects == 0)
    }

    @Test func codableActionsRoundTripThroughAJSONLinesFile() throws {
        let store = makeCounterStore()
        store.startRecording()
        store.dispatch(.increment)
        store.dispatch(.rename("saved"))
        let recording = try #require(store.recording)
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        try recording.writeActions(to: url)
        let lines = try String(contentsOf: url, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let loaded = try Recording<Counter, CounterAction>(initialState: Counter(), contentsOf: url)
        #expect(loaded.actions.map(\.action) == [.increment, .rename("saved")])
        let replayed = makeCounterStore()
        try replayed.replay(loaded)
        #expect(replayed.state == store.state)
    }

    @Test func aCorruptLineIsReportedWithItsNumber() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data("{\"date\":\"2026-01-01T00:00:00Z\",\"action\":{\"increment\":{}}}\nnot json\n".utf8).write(to: url)
        #expect {
            try Recording<Counter, CounterAction>(initialState: Counter(), contentsOf: url)
        } throws: { error in
            "\(error)".contains("Line 2 of")
        }
    }

    @Test func travelToAStepAndBack() throws {
        let store = makeCounterStore()
        let counts = Recorder<Int>()
        let token = store.subscribe(\.count) { counts.append($0) }
        store.startRecording()
        for _ in 0..<5 { store.dispatch(.increment) }
        try store.travel(to: 2)
        #expect(store.state.count == 2)
        try store.travel(to: 5)
        #expect(store.state.count == 5)
        try store.travel(to: 0)
        #expect(store.state.count == 0)
        #expect(counts.elements == [0, 1, 2, 3, 4, 5, 2, 5, 0])
        token.cancel()
    }

    @Test func dispatchingFromThePastDropsTheFuture() throws {
        let store = makeCounterStore()
        store.startRecording()
        for _ in 0..<3 { store.dispatch(.increment) }
        try store.travel(to: 1)
        store.dispatch(.set(10))
        #expect(store.recording?.actions.map(\.action) == [.increment, .set(10)])
        #expect(store.state.count == 10)
    }

    @Test func travelWithoutRecordingOrOutOfRangeIsAnError() {
        let store = makeCounterStore()
        #expect(throws: TimeTravelError.notRecording) { try store.travel(to: 0) }
        store.startRecording()
        store.dispatch(.increment)
        #expect(throws: TimeTravelError.noSuchStep(2, recorded: 1)) { try store.travel(to: 2) }
        #expect("\(TimeTravelError.noSuchStep(2, recorded: 1))".contains("steps go from 0 to 1"))
    }
}
