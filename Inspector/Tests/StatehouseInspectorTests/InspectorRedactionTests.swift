import Foundation
import Statehouse
import StatehouseTestSupport
import Testing
@testable import StatehouseInspector

/// A redacted member, or a container's value its `ValueRedaction` keeps out, never reaches a response: not the state,
/// not an action, not a diff, not an export, not the feed.
@Suite("Secrets never reach the inspector's page")
struct InspectorRedactionTests {
    @Test func aRedactedFieldAppearsInNoResponse() async throws {
        try await withInspector { inspector async throws in
            let store = Store(initialState: Notes(password: "s3cret-at-start"), reducer: reduceNotes)
            let apiKey = StateContainer("k3y-at-start", key: "inspector.apiKey")
            inspector.attach(store, name: "notes", redacting: .fields("PASSWORD", "setPassword"), allowsJumps: true)
            inspector.attach(apiKey, values: .redacted)
            store.dispatch(.setPassword("s3cret-later"))
            store.dispatch(.add("visible"))
            apiKey.modify("k3y-later")
            #expect(await eventuallyAsync { (try? await inspector.log(of: "notes").count) == 2 })
            let events = try await exchange(
                port: inspector.port, "GET /\(inspector.token)/api/events?since=0 HTTP/1.1\r\nHost: 127.0.0.1:\(inspector.port)\r\n\r\n",
                until: { $0.contains("visible") }
            )
            #expect(events.contains("visible"))
            var texts = [events]
            for path in ["api/overview", "api/stores/notes", "api/stores/notes/states/0", "api/stores/notes/states/1", "api/stores/notes/export"] {
                texts.append(try await inspector.request(path).text)
            }
            for text in texts {
                #expect(!text.contains("s3cret") && !text.contains("k3y"))
            }
            #expect(texts[2].contains("‹redacted›"))
        }
    }

    @Test func redactionReplacesMembersOfThoseNamesAtAnyDepth() {
        let tree = JSONTree.object([
            "token": .string("a"), "user": .object(["Token": .number(1), "name": .string("ada")]),
            "list": .array([.object(["token": .null])]),
        ])
        let redacted = InspectorRedaction.fields("token").apply(to: tree)
        #expect(redacted == .object([
            "token": InspectorRedaction.placeholder,
            "user": .object(["Token": InspectorRedaction.placeholder, "name": .string("ada")]),
            "list": .array([.object(["token": InspectorRedaction.placeholder])]),
        ]))
        #expect(InspectorRedaction.none.apply(to: tree) == tree)
    }
}
