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
            #expect(try store.states(replaying: recording).last == store.state)

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
