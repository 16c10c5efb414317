import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Statehouse
import TimeTrackerCore

/// `GET/POST /api/projects`, `POST /api/projects/{id}/start|stop|restore`, `PATCH /api/projects/{id}` (a new name),
/// `DELETE /api/projects/{id}`, and `POST /api/undo|redo`.
///
/// Every write is a ``TrackerAction`` performed by the tracker. Refusals come back as a 4xx status with
/// `{"error": "…"}` and change nothing.
struct ProjectsAPI: Sendable {
    let tracker: TimeTracker
    /// How long a request body may take to arrive whole.
    let bodyTimeout: Duration

    func register(on group: RouterGroup<BasicRequestContext>) {
        group.get { _, _ in
            try APIResponse.json(tracker.store.state.projects.map { ProjectPayload($0) })
        }
        group.post { request, _ in
            try await decoding(Named.self, from: request, example: Named.example) { new in
                try await perform(.addProject(name: new.name), status: .created)
            }
        }
        group.patch(":id") { request, context in
            try await decoding(Named.self, from: request, example: Named.example) { new in
                try await perform(context) { id in .renameProject(id: id, name: new.name) }
            }
        }
        group.post(":id/start") { _, context in
            try await perform(context, TrackerAction.startActivity(projectID:))
        }
        group.post(":id/stop") { _, context in
            try await perform(context, TrackerAction.stopActivity(projectID:))
        }
        group.delete(":id") { _, context in
            try await perform(context, TrackerAction.deleteProject(id:))
        }
        group.post(":id/restore") { _, context in
            try await perform(context, TrackerAction.restoreProject(id:))
        }
    }

    /// `POST /api/undo` and `POST /api/redo`: the project the step changed (204 when it is gone), or 409 with what
    /// is in the way.
    func registerHistory(on group: RouterGroup<BasicRequestContext>) {
        group.post("undo") { _, _ in try await perform(.undo, status: .ok) }
        group.post("redo") { _, _ in try await perform(.redo, status: .ok) }
    }

    /// The body, or `nil` if it is not whole within `timeout`: the idle timeout starts again at every byte, so a
    /// client sending its body a byte at a time would hold its connection for hours.
    /// - Throws: When the body is larger than ``RequestGuard/maximumBodySize``.
    private static func body(of request: Request, within timeout: Duration) async throws -> ByteBuffer? {
        try await withThrowingTaskGroup(of: ByteBuffer?.self) { group in
            group.addTask { try await request.body.collect(upTo: RequestGuard.maximumBodySize) }
            group.addTask {
                try await Task.sleep(for: timeout)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Reads a `Body` from the request's JSON and hands it to `handle`; a body that is late, too large or not such an
    /// object (`example` shows one) is answered here.
    func decoding<Body: Decodable>(
        _ type: Body.Type, from request: Request, example: String, _ handle: (Body) async throws -> Response
    ) async throws -> Response {
        let bytes: ByteBuffer
        do {
            guard let whole = try await Self.body(of: request, within: bodyTimeout) else {
                var response = APIResponse.error(.requestTimeout, "The request body did not arrive in time.")
                response.headers[.connection] = "close"
                return response
            }
            bytes = whole
        } catch {
            return APIResponse.error(.contentTooLarge, "A request body has at most 16 KiB.")
        }
        guard let decoded = try? JSONDecoder().decode(Body.self, from: Data(bytes.readableBytesView)) else {
            return APIResponse.error(.badRequest, "Send a JSON object such as \(example).")
        }
        return try await handle(decoded)
    }

    private struct Named: Decodable {
        static let example = #"{"name": "Writing"}"#
        var name: String
    }

    func perform(
        _ context: BasicRequestContext,
        status: HTTPResponse.Status = .ok,
        _ action: (Int64) -> TrackerAction
    ) async throws -> Response {
        guard let id = context.parameters.get("id", as: Int64.self) else {
            return APIResponse.error(.badRequest, "An id is a whole number.")
        }
        return try await perform(action(id), status: status)
    }

    func perform(_ action: TrackerAction, status: HTTPResponse.Status) async throws -> Response {
        let project: ProjectSummary?
        do {
            project = try await tracker.perform(action)
        } catch {
            var response = APIResponse.error(error.httpStatus, error.description)
            if case .databaseLocked = error { response.headers[.retryAfter] = "1" }
            return response
        }
        guard let project else { return Response(status: .noContent) }
        return try APIResponse.json(ProjectPayload(project), status: status)
    }
}

extension TrackerError {
    /// Bad input is the client's fault (400, 404, 409); a database another program holds is a passing state (503);
    /// a failing database is ours (500).
    var httpStatus: HTTPResponse.Status {
        switch self {
        case .emptyName, .nameTooLong, .nameHasControlCharacters, .nameHasInvisibleCharacters, .nameStartsWithCombiningMark,
             .invalidActivityTimes:
            .badRequest
        case .projectNotFound, .activityNotFound: .notFound
        case .duplicateName, .alreadyRunning, .notRunning, .nothingToUndo, .nothingToRedo, .changedSince, .changedElsewhere,
             .overlappingActivity, .importRefused:
            .conflict
        case .databaseLocked, .databaseGone: .serviceUnavailable
        case .database, .unusableDatabase, .syncNeedsSQLite: .internalServerError
        }
    }
}
