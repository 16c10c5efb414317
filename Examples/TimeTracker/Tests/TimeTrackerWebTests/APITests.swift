import Foundation
import Hummingbird
import HummingbirdTesting
import NIOCore
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport
import TimeTrackerWeb

/// Runs `test` against the API of a tracker on a new database, through Hummingbird's router test framework.
private func withAPI(_ test: @Sendable (any TestClientProtocol, TimeTracker) async throws -> Void) async throws {
    let database = TemporaryDatabase()
    let tracker = try TestClock().tracker(at: database.path)
    let application = Application(router: WebApplication.router(tracker: tracker))
    try await application.test(.router) { client in try await test(client, tracker) }
}

private func json(_ text: String) -> ByteBuffer { ByteBuffer(string: text) }

private func decode<T: Decodable>(_ type: T.Type, _ response: TestResponse) throws -> T {
    try JSONDecoder().decode(type, from: Data(response.body.readableBytesView))
}

private struct ErrorBody: Decodable { var error: String }

@Suite("JSON API")
struct APITests {
    @Test func addStartStopDeleteAndList() async throws {
        try await withAPI { client, _ in
            let created = try await client.execute(uri: "/api/projects", method: .post, body: json(#"{"name":" Writing "}"#))
            #expect(created.status == .created)
            let project = try decode(ProjectPayload.self, created)
            #expect(project.name == "Writing" && !project.running)
            let started = try await client.execute(uri: "/api/projects/\(project.id)/start", method: .post)
            #expect(started.status == .ok)
            #expect(try decode(ProjectPayload.self, started).running)
            #expect(try decode(ProjectPayload.self, started).runningSince != nil)
            let stopped = try await client.execute(uri: "/api/projects/\(project.id)/stop", method: .post)
            #expect(try decode(ProjectPayload.self, stopped).running == false)
            let list = try await client.execute(uri: "/api/projects", method: .get)
            #expect(list.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(try decode([ProjectPayload].self, list).map(\.name) == ["Writing"])
            let deleted = try await client.execute(uri: "/api/projects/\(project.id)", method: .delete)
            #expect(deleted.status == .noContent)
            #expect(try decode([ProjectPayload].self, try await client.execute(uri: "/api/projects", method: .get)).isEmpty)
        }
    }

    @Test(arguments: [
        ("not json", "Send a JSON object"),
        (#"{"title":"x"}"#, "Send a JSON object"),
        (#"{"name":42}"#, "Send a JSON object"),
        (#"{"name":"  "}"#, "needs a name"),
        (#"{"name":"a\nb"}"#, "control characters"),
    ])
    func badInputIs400WithAMessageAndChangesNothing(body: String, message: String) async throws {
        try await withAPI { client, tracker in
            let response = try await client.execute(uri: "/api/projects", method: .post, body: json(body))
            #expect(response.status == .badRequest)
            #expect(try decode(ErrorBody.self, response).error.contains(message))
            #expect(tracker.store.state.projects.isEmpty)
        }
    }

    @Test func refusedActionsGetTheirStatusAndChangeNothing() async throws {
        try await withAPI { client, tracker in
            let project = try decode(
                ProjectPayload.self,
                try await client.execute(uri: "/api/projects", method: .post, body: json(#"{"name":"Writing"}"#))
            )
            let duplicate = try await client.execute(uri: "/api/projects", method: .post, body: json(#"{"name":"WRITING"}"#))
            #expect(duplicate.status == .conflict)
            #expect(try decode(ErrorBody.self, duplicate).error.contains("already exists"))
            let notRunning = try await client.execute(uri: "/api/projects/\(project.id)/stop", method: .post)
            #expect(notRunning.status == .conflict)
            let missing = try await client.execute(uri: "/api/projects/999/start", method: .post)
            #expect(missing.status == .notFound)
            #expect(try decode(ErrorBody.self, missing).error == "There is no project with id 999.")
            let notAnID = try await client.execute(uri: "/api/projects/abc", method: .delete)
            #expect(notAnID.status == .badRequest)
            #expect(tracker.store.state.projects.map(\.name) == ["Writing"])
            #expect(tracker.store.state.projects.allSatisfy { !$0.isRunning })
        }
    }

    @Test func anOversizedBodyIsRefused() async throws {
        try await withAPI { client, tracker in
            let body = #"{"name":""# + String(repeating: "x", count: 20_000) + #""}"#
            let response = try await client.execute(uri: "/api/projects", method: .post, body: json(body))
            #expect(response.status == .contentTooLarge)
            #expect(try decode(ErrorBody.self, response).error.contains("16 KiB"))
            #expect(tracker.store.state.projects.isEmpty)
        }
    }
}

@Suite("The page")
struct PageTests {
    @Test func thePageSetsNamesAsTextOnlyAndForbidsInlineScripts() async throws {
        try await withAPI { client, tracker in
            try await tracker.perform(.addProject(name: "<script>alert(1)</script>"))
            let page = try await client.execute(uri: "/", method: .get)
            #expect(page.status == .ok)
            #expect(page.headers[.contentType] == "text/html; charset=utf-8")
            #expect(page.headers[.contentSecurityPolicy]?.contains("default-src 'self'") == true)
            let html = String(buffer: page.body)
            #expect(!html.contains("alert(1)"))  // names never travel in the HTML
            let script = String(buffer: try await client.execute(uri: "/app.js", method: .get).body)
            #expect(script.contains("textContent"))
            #expect(!script.contains("innerHTML") && !script.contains("insertAdjacentHTML") && !script.contains("document.write"))
        }
    }
}

@Suite("Live events", .serialized)
struct EventTests {
    @Test func aPageGetsTheStateNowAndEveryChangeWhoeverMadeIt() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let other = try TestClock().tracker(at: database.path)  // another process's connections
        let application = Application(
            router: WebApplication.router(tracker: tracker),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0))
        )
        try await application.test(.live) { client in
            let port = try #require(client.port)
            let events = try EventStreamClient(port: port)
            #expect(events.next().map { $0.contains(#""projects":[]"#) } == true)
            try await tracker.perform(.addProject(name: "Here"))
            #expect(events.next { $0.contains(#""name":"Here""#) } != nil)
            try await other.perform(.addProject(name: "Elsewhere"))
            let event = try #require(events.next { $0.contains("Elsewhere") })
            #expect(event.contains(#""now":"#))
        }
    }
}
