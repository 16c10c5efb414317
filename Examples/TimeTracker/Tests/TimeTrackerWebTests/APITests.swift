import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Statehouse
import Synchronization
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport
@testable import TimeTrackerWeb

@Suite("JSON API")
struct APITests {
    @Test func addStartStopDeleteAndList() async throws {
        try await withAPI { client, _ in
            let created = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":" Writing "}"#))
            #expect(created.status == .created)
            let project = try decode(ProjectPayload.self, created)
            #expect(project.name == "Writing" && !project.running)
            let started = try await client.execute(uri: "/api/projects/\(project.id)/start", method: .post, headers: jsonHeaders)
            #expect(started.status == .ok)
            #expect(try decode(ProjectPayload.self, started).running)
            #expect(try decode(ProjectPayload.self, started).runningSince != nil)
            let stopped = try await client.execute(uri: "/api/projects/\(project.id)/stop", method: .post, headers: jsonHeaders)
            #expect(try decode(ProjectPayload.self, stopped).running == false)
            let list = try await client.execute(uri: "/api/projects", method: .get)
            #expect(list.headers[.contentType]?.hasPrefix("application/json") == true)
            #expect(try decode([ProjectPayload].self, list).map(\.name) == ["Writing"])
            let deleted = try await client.execute(uri: "/api/projects/\(project.id)", method: .delete, headers: jsonHeaders)
            #expect(deleted.status == .noContent)
            #expect(try decode([ProjectPayload].self, try await client.execute(uri: "/api/projects", method: .get)).isEmpty)
            let restored = try await client.execute(uri: "/api/projects/\(project.id)/restore", method: .post, headers: jsonHeaders)
            #expect(restored.status == .ok)
            #expect(try decode(ProjectPayload.self, restored).id == project.id)
            #expect(try decode([ProjectPayload].self, try await client.execute(uri: "/api/projects", method: .get)).map(\.name) == ["Writing"])
        }
    }

    /// `POST /api/undo` and `/api/redo` step through the history: 409 with a message when there is nothing, the
    /// project the step brought back, or 204 when it took the project away.
    @Test func undoAndRedoStepThroughTheHistory() async throws {
        try await withAPI { client, tracker in
            let nothing = try await client.execute(uri: "/api/undo", method: .post, headers: jsonHeaders)
            #expect(nothing.status == .conflict)
            #expect(try decode(ErrorBody.self, nothing).error == "There is nothing to undo.")
            _ = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"Writing"}"#))
            #expect(await eventually { tracker.store.state.undoName == "Add Writing" })
            #expect(try await client.execute(uri: "/api/undo", method: .post, headers: jsonHeaders).status == .noContent)
            #expect(tracker.store.state.projects.isEmpty && tracker.store.state.redoName == "Add Writing")
            let redone = try await client.execute(uri: "/api/redo", method: .post, headers: jsonHeaders)
            #expect(redone.status == .ok)
            #expect(try decode(ProjectPayload.self, redone).name == "Writing")
            #expect(try await client.execute(uri: "/api/redo", method: .post, headers: jsonHeaders).status == .conflict)
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
            let response = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(body))
            #expect(response.status == .badRequest)
            #expect(try decode(ErrorBody.self, response).error.contains(message))
            #expect(tracker.store.state.projects.isEmpty)
        }
    }

    @Test func refusedActionsGetTheirStatusAndChangeNothing() async throws {
        try await withAPI { client, tracker in
            let project = try decode(
                ProjectPayload.self,
                try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"Writing"}"#))
            )
            let duplicate = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"WRITING"}"#))
            #expect(duplicate.status == .conflict)
            #expect(try decode(ErrorBody.self, duplicate).error.contains("already exists"))
            let notRunning = try await client.execute(uri: "/api/projects/\(project.id)/stop", method: .post, headers: jsonHeaders)
            #expect(notRunning.status == .conflict)
            let missing = try await client.execute(uri: "/api/projects/999/start", method: .post, headers: jsonHeaders)
            #expect(missing.status == .notFound)
            #expect(try decode(ErrorBody.self, missing).error == "There is no project with id 999.")
            let notAnID = try await client.execute(uri: "/api/projects/abc", method: .delete, headers: jsonHeaders)
            #expect(notAnID.status == .badRequest)
            #expect(tracker.store.state.projects.map(\.name) == ["Writing"])
            #expect(tracker.store.state.projects.allSatisfy { !$0.isRunning })
        }
    }

    /// `PATCH /api/projects/{id}` renames: the project comes back with its new name; a taken name is 409, a body
    /// without a name 400, an unknown project 404, and none of them changes anything.
    @Test func patchRenamesAProject() async throws {
        try await withAPI { client, tracker in
            for name in ["Writing", "Reading"] {
                _ = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"\#(name)"}"#))
            }
            let id = try tracker.project(named: "Writing").id
            let renamed = try await client.execute(uri: "/api/projects/\(id)", method: .patch, headers: jsonHeaders, body: json(#"{"name":"Essays"}"#))
            #expect(renamed.status == .ok)
            #expect(try decode(ProjectPayload.self, renamed).name == "Essays")
            let taken = try await client.execute(uri: "/api/projects/\(id)", method: .patch, headers: jsonHeaders, body: json(#"{"name":"READING"}"#))
            #expect(taken.status == .conflict)
            let nameless = try await client.execute(uri: "/api/projects/\(id)", method: .patch, headers: jsonHeaders, body: json(#"{"title":"x"}"#))
            #expect(nameless.status == .badRequest)
            let missing = try await client.execute(uri: "/api/projects/999", method: .patch, headers: jsonHeaders, body: json(#"{"name":"x"}"#))
            #expect(missing.status == .notFound)
            #expect(tracker.store.state.projects.map(\.name) == ["Essays", "Reading"])
        }
    }

    @Test func anOversizedBodyIsRefused() async throws {
        try await withAPI { client, tracker in
            let body = #"{"name":""# + String(repeating: "x", count: 20_000) + #""}"#
            let response = try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(body))
            #expect(response.status == .contentTooLarge)
            #expect(try decode(ErrorBody.self, response).error.contains("16 KiB"))
            #expect(tracker.store.state.projects.isEmpty)
        }
    }
}
