import Dispatch
import Foundation
import Statehouse
import StatehouseTestSupport
import Testing
@testable import StatehouseInspector

/// The log a page shows: every action in order with who sent it and the paths it changed, the state after any step
/// still held, the ring's bound, and the store moved to a past state where that is allowed.
@Suite("The inspector's log of a store")
struct InspectorLogTests {
    @Test func everyActionArrivesInOrderWithItsSourceAndDiff() async throws {
        try await withInspector { inspector async throws in
            let echo = Middleware<Notes, NotesAction>(name: "echo") { store, action, next in
                next(action)
                if case .add(let title) = action, !title.hasSuffix("!") { store.dispatch(.add(title + "!")) }
            }
            let store = Store(initialState: Notes(), reducer: { (state: inout Notes, action: NotesAction) -> Effect<NotesAction> in
                reduceNotes(&state, action)
                return action == .toggle(0) ? .send(.count) : .none
            }, middleware: [echo])
            inspector.attach(store, name: "notes")
            store.dispatch(.add("Milk"))
            store.dispatch(.toggle(0))
            #expect(await eventuallyAsync { (try? await inspector.log(of: "notes").count) == 4 })
            let log = try await inspector.log(of: "notes")
            #expect(log.map { $0["name"] as? String } == ["add", "add", "toggle", "count"])
            #expect(log.map { $0["source"] as? String } == ["dispatch", "middleware echo", "dispatch", "effect"])
            #expect(log.map { $0["step"] as? Int } == [1, 2, 3, 4])
            let changes = try #require(log[2]["changes"] as? [[String: Any]])
            #expect(changes.count == 1)
            #expect(changes[0]["path"] as? String == "todos[0].done")
            #expect(changes[0]["old"] as? Bool == false && changes[0]["new"] as? Bool == true)
            let ids = log.compactMap { $0["id"] as? Int }
            #expect(ids == ids.sorted() && Set(ids).count == 4)
        }
    }

    @Test func theStateAfterAnyStepHeldIsShown() async throws {
        try await withInspector { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes")
            for title in ["a", "b", "c"] { store.dispatch(.add(title)) }
            #expect(await eventuallyAsync { (try? await inspector.log(of: "notes").count) == 3 })
            for step in 0...3 {
                let answer = try await inspector.request("api/stores/notes/states/\(step)")
                let state = try #require((answer.json() as? [String: Any])?["state"] as? [String: Any])
                #expect((state["todos"] as? [[String: Any]])?.compactMap { $0["title"] as? String } == Array(["a", "b", "c"].prefix(step)))
            }
            #expect(try await inspector.request("api/stores/notes/states/4").status == 404)
            #expect(try await inspector.request("api/stores/nothing").status == 404)
        }
    }

    /// The ring keeps the last `capacity` changes; the state after the oldest still held, and before it, are still
    /// exact, because the base moves with the ring.
    @Test func theRingKeepsTheLastChangesAndTheirStates() async throws {
        try await withInspector(capacity: 50) { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes")
            // In batches the intake (of the same capacity) holds, so that the log misses none.
            for batch in 0..<10 {
                for index in (batch * 50)..<(batch * 50 + 50) { store.dispatch(index % 10 == 0 ? .add("t\(index)") : .count) }
                #expect(await eventuallyAsync { (try? await inspector.log(of: "notes").last?["step"] as? Int) == batch * 50 + 50 })
            }
            let log = try await inspector.log(of: "notes")
            #expect(log.count == 50)
            #expect(log.first?["step"] as? Int == 451)
            let before = try await inspector.request("api/stores/notes/states/450").json() as? [String: Any]
            #expect((before?["state"] as? [String: Any])?["count"] as? Int == 405)
            #expect(try await inspector.request("api/stores/notes/states/449").status == 404)
            let overview = try await inspector.request("api/overview").json() as? [String: Any]
            let summary = (overview?["stores"] as? [[String: Any]])?.first
            #expect(summary?["dropped"] as? Int == 450 && summary?["steps"] as? Int == 500)
        }
    }

    @Test func anInMemoryStoreThatAllowsItJumpsAndResumes() async throws {
        try await withInspector { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes", allowsJumps: true)
            store.dispatch(.add("first"))
            store.dispatch(.add("second"))
            #expect(await eventuallyAsync { (try? await inspector.log(of: "notes").count) == 2 })
            let jump = try await inspector.request("api/stores/notes/jump", method: "POST", body: Data(#"{"step": 1}"#.utf8))
            #expect(jump.status == 200)
            #expect(store.state.todos.map(\.title) == ["first"])
            #expect(await eventuallyAsync { (try? await inspector.log(of: "notes").last?["kind"] as? String) == "travel" })
            #expect(try await inspector.request("api/stores/notes/jump", method: "POST", body: Data(#"{"step": 0}"#.utf8)).status == 200)
            #expect(store.state.todos.isEmpty)
            #expect(try await inspector.request("api/stores/notes/resume", method: "POST", body: Data("{}".utf8)).status == 200)
            #expect(store.state.todos.map(\.title) == ["first", "second"])
            #expect(try await inspector.request("api/stores/notes/resume", method: "POST", body: Data("{}".utf8)).status == 409)
            let bad = try await inspector.request("api/stores/notes/jump", method: "POST", body: Data("step".utf8))
            #expect(bad.status == 400)
        }
    }

    @Test func aPersistedStoreOrOneThatDidNotOptInIsNotMoved() async throws {
        try await withInspector { inspector async throws in
            let persisted = Store(
                initialState: Notes(), key: "inspector.persisted", storage: MemoryStorage(), reducer: reduceNotes
            )
            let plain = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(persisted, name: "persisted", allowsJumps: true)
            inspector.attach(plain, name: "plain")
            persisted.dispatch(.add("kept"))
            plain.dispatch(.add("kept"))
            #expect(await eventuallyAsync {
                let persistedCount = try? await inspector.log(of: "persisted").count
                let plainCount = try? await inspector.log(of: "plain").count
                return persistedCount == 1 && plainCount == 1
            })
            for name in ["persisted", "plain"] {
                let answer = try await inspector.request("api/stores/\(name)/jump", method: "POST", body: Data(#"{"step": 0}"#.utf8))
                #expect(answer.status == 409)
                #expect(answer.text.contains("does not allow jumps"))
            }
            #expect(persisted.state.todos.count == 1 && plain.state.todos.count == 1)
        }
    }

    /// Export writes the store's recording; importing it replays it with the store's reducer into a log of its own
    /// that ends in the same state, and `Recording` reads the export as any recording.
    @Test func anExportImportedReplaysToTheSameState() async throws {
        try await withInspector { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes")
            store.dispatch(.add("Milk"))
            store.dispatch(.add("Bread"))
            store.dispatch(.toggle(1))
            store.dispatch(.count)
            #expect(await eventuallyAsync { (try? await inspector.log(of: "notes").count) == 4 })
            let export = try await inspector.request("api/stores/notes/export")
            #expect(export.status == 200 && export.headers["content-type"] == "application/x-ndjson")
            #expect(export.text.split(separator: "\n").count == 4)
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("inspector-\(UUID()).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            try export.body.write(to: file)
            let recording = try Recording<Notes, NotesAction>(initialState: Notes(), contentsOf: file)
            var finalState: Notes?
            try store.forEachState(replaying: recording) { _, state in finalState = state }
            #expect(finalState == store.state)

            let imported = try await inspector.request("api/stores/notes/import", method: "POST", body: export.body, type: "application/x-ndjson")
            #expect(imported.status == 201)
            let replayed = try await inspector.request("api/stores/notes.replay").json() as? [String: Any]
            let expected = try JSONSerialization.jsonObject(with: JSONEncoder().encode(store.state)) as? NSDictionary
            #expect((replayed?["state"] as? NSDictionary) == expected)
            #expect((replayed?["entries"] as? [Any])?.count == 4)

            let bad = try await inspector.request(
                "api/stores/notes/import", method: "POST", body: Data("{\"nope\": 1}\n".utf8), type: "application/x-ndjson"
            )
            #expect(bad.status == 400 && bad.text.contains("Line 1"))
        }
    }

    @Test func aStoreWhoseTypesAreNotEncodableShowsWhatItsRedactionLetsThrough() async throws {
        struct Opaque: Sendable, CustomStringConvertible {
            var value = 0
            var description: String { "Opaque(\(value))" }
        }
        try await withInspector { inspector async throws in
            let store = Store<Opaque, Int>(initialState: Opaque()) { state, amount in state.value += amount }
            inspector.attach(store, name: "opaque", actions: .redacted)
            store.dispatch(41)
            #expect(await eventuallyAsync { (try? await inspector.log(of: "opaque").count) == 1 })
            let entry = try #require(try await inspector.log(of: "opaque").first)
            #expect(entry["action"] as? String == "‹redacted›")
            let changes = entry["changes"] as? [[String: Any]]
            #expect(changes?.first?["new"] as? String == "Opaque(41)")
            let overview = try await inspector.request("api/overview").json() as? [String: Any]
            #expect((overview?["stores"] as? [[String: Any]])?.first?["canImport"] as? Bool == false)
        }
    }

    /// A detached store, or one let go, is no longer followed, and the inspector does not keep it alive.
    @Test func theInspectorNeitherKeepsAStoreAliveNorFollowsOneDetached() async throws {
        try await withInspector { inspector async throws in
            weak var weakStore: Store<Notes, NotesAction>?
            do {
                let store = Store(initialState: Notes(), reducer: reduceNotes)
                weakStore = store
                inspector.attach(store, name: "gone")
                store.dispatch(.count)
            }
            #expect(weakStore == nil)
            let kept = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(kept, name: "kept")
            inspector.detach(store: "kept")
            kept.dispatch(.count)
            let answer = try await inspector.request("api/stores/kept")
            #expect(answer.status == 404)
        }
    }
}

/// What the log must not lose or confuse: the end of a burst the inspector fell behind on, and a store replaced under
/// its name; and an import far longer than the log.
@Suite("The inspector's log under pressure")
struct InspectorLogPressureTests {
    /// A burst far faster than encoding ends while the intake is full: the last event was dropped, and no later one
    /// carries the drops. The log still ends on the store's last state.
    @Test func aBurstThatEndsWhileTheIntakeIsFullEndsOnItsLastState() async throws {
        try await withInspector(capacity: 10) { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes")
            for _ in 0..<20_000 { store.dispatch(.count) }
            let last: @Sendable () async -> Int? = {
                let detail = try? await inspector.request("api/stores/notes").json() as? [String: Any]
                return (detail?["state"] as? [String: Any])?["count"] as? Int
            }
            #expect(await eventuallyAsync { await last() == 20_000 })
            let entries = try await inspector.log(of: "notes")
            #expect(entries.contains { ($0["missedBefore"] as? Int ?? 0) > 0 })
        }
    }

    /// Once a store is replaced under its name (or detached), nothing more is published under that name from it,
    /// though its worker was in the middle of a batch: held there, encoding a state, while the store is replaced.
    @Test func aReplacedStorePublishesNothingMoreUnderItsName() async throws {
        try await withInspector { inspector async throws in
            let gate = EncodingGate()
            let first = Store<Gated, Int>(initialState: Gated(count: 0, gate: gate)) { state, _ in state.count += 1 }
            inspector.attach(first, name: "gated")
            for _ in 0..<3 { first.dispatch(1) }
            // The worker has published step 1 and is encoding the state after step 2.
            #expect(await offThePool { gate.entered.wait(timeout: .now() + 120) == .success })
            // A page following from now on, before the replacement.
            let page = try RawConnection(port: inspector.port)
            let now = inspector.registry.hub.snapshot { $0 }
            page.send("GET /\(inspector.token)/api/events?since=\(now) HTTP/1.1\r\nHost: 127.0.0.1:\(inspector.port)\r\n\r\n")
            #expect(await eventually { inspector.registry.hub.followerCount == 1 })
            let second = Store<Gated, Int>(initialState: Gated(count: 100, gate: EncodingGate())) { state, _ in state.count += 1 }
            inspector.attach(second, name: "gated")
            gate.proceed.signal()
            second.dispatch(1)
            let feed = await offThePool { page.receive(until: { $0.contains(#""new":101"#) }) }
            #expect(feed.contains(#""new":101"#))
            // After the replacement's `attached` event, only the second store's step 1.
            let afterReplacement = String(feed[(feed.range(of: "event: attached")?.upperBound ?? feed.startIndex)...])
            let steps = afterReplacement.matches(of: /"step":(\d+)\}?,"store":"gated"/).map { Int($0.output.1)! }
            #expect(steps == [1], "\(steps)")
        }
    }

    /// A recording far longer than the log: replayed whole, kept as the log keeps a store (its last `capacity`
    /// steps), its final state the store's.
    @Test func anImportLongerThanTheLogKeepsItsLastStepsAndItsFinalState() async throws {
        try await withInspector(capacity: 50) { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes")
            let line = #"{"action":{"add":{"_0":"x"}},"date":"2026-01-01T00:00:00Z"}"#
            let lines = Data(Array(repeating: line, count: 5_000).joined(separator: "\n").utf8)
            let imported = try await inspector.request("api/stores/notes/import", method: "POST", body: lines, type: "application/x-ndjson")
            #expect(imported.status == 201)
            let replay = try await inspector.request("api/stores/notes.replay").json() as? [String: Any]
            #expect((replay?["entries"] as? [Any])?.count == 50)
            #expect(((replay?["state"] as? [String: Any])?["todos"] as? [Any])?.count == 5_000)
            let summary = replay?["summary"] as? [String: Any]
            #expect(summary?["dropped"] as? Int == 4_950 && summary?["steps"] as? Int == 5_000)
            let before = try await inspector.request("api/stores/notes.replay/states/4950").json() as? [String: Any]
            #expect(((before?["state"] as? [String: Any])?["todos"] as? [Any])?.count == 4_950)
        }
    }

    @Test func anImportNeverReplacesAStoreAttachedUnderItsReplaysName() async throws {
        try await withInspector { inspector async throws in
            let store = Store(initialState: Notes(), reducer: reduceNotes)
            let other = Store(initialState: Notes(), reducer: reduceNotes)
            inspector.attach(store, name: "notes")
            inspector.attach(other, name: "notes.replay")
            let line = Data(#"{"action":{"count":{}},"date":"2026-01-01T00:00:00Z"}"#.utf8)
            let imported = try await inspector.request("api/stores/notes/import", method: "POST", body: line, type: "application/x-ndjson")
            #expect(imported.status == 409)
            let summary = try await inspector.request("api/stores/notes.replay").json() as? [String: Any]
            #expect((summary?["summary"] as? [String: Any])?["replayOf"] == nil)
        }
    }
}

/// Holds the encoding of a ``Gated`` state whose count is 2, until told to go on.
final class EncodingGate: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let proceed = DispatchSemaphore(value: 0)
}

/// A state whose encoding of the count 2 waits at its gate: what holds an inspector's worker in the middle of a batch.
struct Gated: Encodable, Sendable {
    var count: Int
    let gate: EncodingGate

    private enum CodingKeys: String, CodingKey {
        case count
    }

    func encode(to encoder: any Encoder) throws {
        if count == 2 {
            gate.entered.signal()
            _ = gate.proceed.wait(timeout: .now() + 120)
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
    }
}

@Suite("A scoped store in the inspector")
struct InspectorScopedStoreTests {
    @Test func aScopedStoreSaysToAttachItsRoot() async throws {
        try await withInspector { inspector async throws in
            let root = Store(initialState: Notes(), reducer: reduceNotes)
            let scope = root.scope(state: \.count, action: { (_: Int) in NotesAction.count })
            #expect(scope.isScoped && !root.isScoped)
            inspector.attach(scope, name: "scope")
            let detail = try await inspector.request("api/stores/scope").json() as? [String: Any]
            let note = (detail?["summary"] as? [String: Any])?["note"] as? String
            #expect(note?.contains("Attach the root") == true)
        }
    }
}
