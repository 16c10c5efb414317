import Foundation
import HTTPTypes
import Hummingbird
import TimeTrackerCore

/// A project's history and its corrections: `GET/POST /api/projects/{id}/activities`, `PATCH/DELETE
/// /api/activities/{id}`. Times are seconds since 1970, as everywhere in the API; a change answers with the project.
extension ProjectsAPI {
    func registerActivities(projects: RouterGroup<BasicRequestContext>, activities: RouterGroup<BasicRequestContext>) {
        // `?limit=` (at most 500) and `?after=`, the `next` of the page before.
        projects.get(":id/activities") { request, context in
            guard let id = context.parameters.get("id", as: Int64.self) else {
                return APIResponse.error(.badRequest, "An id is a whole number.")
            }
            guard let limit = request.uri.queryParameters.get("limit").map({ Int(String($0)) }) ?? 50 else {
                return APIResponse.error(.badRequest, "limit is a whole number.")
            }
            var after: ActivityRecord?
            if let cursor = request.uri.queryParameters.get("after") {
                guard let last = Self.record(fromCursor: String(cursor), projectID: id) else {
                    return APIResponse.error(.badRequest, "after is the next of the page before.")
                }
                after = last
            }
            let page: [ActivityRecord]
            do throws(TrackerError) {
                page = try await tracker.activities(of: id, limit: limit, after: after)
            } catch {
                return APIResponse.error(error.httpStatus, error.description)
            }
            let full = page.count == min(max(limit, 1), 500)
            return try APIResponse.json(HistoryPage(
                activities: page.map(ActivityPayload.init), next: full ? page.last.map(Self.cursor) : nil
            ))
        }
        projects.post(":id/activities") { request, context in
            try await decoding(Times.self, from: request, example: Times.example) { times in
                guard let stop = times.stop else {
                    return APIResponse.error(.badRequest, "An activity added by hand needs its stoppedAt.")
                }
                return try await perform(context, status: .created) { id in
                    .addActivity(projectID: id, startedAt: times.start, stoppedAt: stop)
                }
            }
        }
        activities.patch(":id") { request, context in
            try await decoding(Times.self, from: request, example: Times.example) { times in
                try await perform(context) { id in .editActivity(id: id, startedAt: times.start, stoppedAt: times.stop) }
            }
        }
        activities.delete(":id") { _, context in
            try await perform(context, TrackerAction.deleteActivity(id:))
        }
    }

    /// A page of history, and what gives the next one (absent on the last).
    private struct HistoryPage: Encodable {
        var activities: [ActivityPayload]
        var next: String?
    }

    private struct Times: Decodable {
        static let example = #"{"startedAt": 1795940000, "stoppedAt": 1795943600}"#
        var startedAt: Double
        var stoppedAt: Double?
        var start: Date { Date(timeIntervalSince1970: startedAt) }
        var stop: Date? { stoppedAt.map(Date.init(timeIntervalSince1970:)) }
    }

    /// `START:ID`: the last activity of a page, where the next begins.
    private static func cursor(_ activity: ActivityRecord) -> String {
        "\(activity.startedAt.timeIntervalSince1970):\(activity.id)"
    }

    private static func record(fromCursor cursor: String, projectID: Int64) -> ActivityRecord? {
        let parts = cursor.split(separator: ":")
        guard parts.count == 2, let start = Double(parts[0]), start.isFinite, let id = Int64(parts[1]) else { return nil }
        return ActivityRecord(id: id, projectID: projectID, startedAt: Date(timeIntervalSince1970: start), stoppedAt: nil)
    }
}
