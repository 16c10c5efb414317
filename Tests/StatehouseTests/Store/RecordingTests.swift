import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A recording of a store's actions replays to the same state, round-trips through a JSON Lines file, and lets the
/// store travel to any step and back.
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
        // What an effect sent back is marked so (a test made of the recording receives it, not sends it).
        #expect(recording.actions.map(\.sentByEffect) == [false, true, false, true])

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

    /// Actions a reducer or middleware dispatches are the app's, not an effect's, even while an effect's action is
    /// being applied; actions of `.send` and of `.run` effects are an effect's.
    @Test func onlyWhatAnEffectSentIsMarkedAsSentByAnEffect() async throws {
        let relay = Middleware<Search, SearchAction> { context, action, next in
            next(action)
            if case .results(let query) = action, query == "relay" { context.dispatch(.ping) }
        }
        let store = Store(initialState: Search(), reducer: searchReducer(), middleware: [relay])
        store.startRecording()
        store.dispatch(.both)
        store.dispatch(.search("relay"))
        await store.finishEffects()
        #expect(await eventually { store.recording?.actions.count == 7 })
        let recording = try #require(store.stopRecording())
        let marked = recording.actions.map { "\($0.action)\($0.sentByEffect ? " (effect)" : "")" }
        #expect(marked.sorted() == [
            "both", "ping", "pong (effect)", "pong (effect)", "pong (effect)", "results(\"relay\") (effect)",
            "search(\"relay\")",
        ])
    }

    /// A line written before actions were marked is an action dispatched; a mark is written only when set.
    @Test func theMarkIsWrittenOnlyWhenSetAndOptionalWhenRead() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-\(UUID()).jsonl")
        defer { try? FileManager.default.removeItem(at: url) }
        try Data(#"{"action":{"increment":{}},"date":"2026-01-01T00:00:00Z"}"#.utf8).write(to: url)
        let old = try Recording<Counter, CounterAction>(initialState: Counter(), contentsOf: url)
        #expect(old.actions.map(\.sentByEffect) == [false])
        let date = Date(timeIntervalSince1970: 0)
        try Recording<Counter, CounterAction>(initialState: Counter(), actions: [
            RecordedAction(date: date, action: .increment),
            RecordedAction(date: date, action: .increment, sentByEffect: true),
        ]).writeActions(to: url)
        #expect(try String(contentsOf: url, encoding: .utf8) == """
            {"action":{"increment":{}},"date":"1970-01-01T00:00:00Z"}
            {"action":{"increment":{}},"date":"1970-01-01T00:00:00Z","sentByEffect":true}

            """)
        #expect(try Recording<Counter, CounterAction>(initialState: Counter(), contentsOf: url).actions.map(\.sentByEffect) == [false, true])
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
