import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport
@testable import TimeTrackerWeb

/// `GET/POST /api/projects/{id}/activities`, `PATCH/DELETE /api/activities/{id}`.
@Suite("The history API")
struct ActivitiesAPITests {
    private struct Page: Decodable {
        var activities: [ActivityPayload]
        var next: String?
    }

    @Test func addPageEditAndDeleteActivities() async throws {
        try await withAPI { client, tracker in
            let project = try decode(
                ProjectPayload.self,
                try await client.execute(uri: "/api/projects", method: .post, headers: jsonHeaders, body: json(#"{"name":"Writing"}"#))
            )
            // Past for the tracker's test clock (2027), and the future below is past any clock.
            let now = 1_700_000_000.0
            for hour in 1...3 {
                let start = now - Double(hour) * 3_600
                let body = #"{"startedAt": \#(start), "stoppedAt": \#(start + 600)}"#
                let added = try await client.execute(
                    uri: "/api/projects/\(project.id)/activities", method: .post, headers: jsonHeaders, body: json(body)
                )
                #expect(added.status == .created)
            }
            let first = try decode(Page.self, try await client.execute(uri: "/api/projects/\(project.id)/activities?limit=2", method: .get))
            #expect(first.activities.map(\.startedAt) == [now - 3_600, now - 7_200])
            let next = try #require(first.next)
            let second = try decode(
                Page.self, try await client.execute(uri: "/api/projects/\(project.id)/activities?limit=2&after=\(next)", method: .get)
            )
            #expect(second.activities.map(\.startedAt) == [now - 10_800] && second.next == nil)

            let id = first.activities[0].id
            let edited = try await client.execute(
                uri: "/api/activities/\(id)", method: .patch, headers: jsonHeaders,
                body: json(#"{"startedAt": \#(now - 3_000), "stoppedAt": \#(now - 1_200)}"#)
            )
            #expect(edited.status == .ok)
            #expect(try decode(ProjectPayload.self, edited).elapsedSeconds == 600 * 2 + 1_800)
            let overlapping = try await client.execute(
                uri: "/api/activities/\(id)", method: .patch, headers: jsonHeaders,
                body: json(#"{"startedAt": \#(now - 7_000), "stoppedAt": \#(now - 1_200)}"#)
            )
            #expect(overlapping.status == .conflict)
            #expect(try decode(ErrorBody.self, overlapping).error.contains("would overlap activity"))
            let future = try await client.execute(
                uri: "/api/projects/\(project.id)/activities", method: .post, headers: jsonHeaders,
                body: json(#"{"startedAt": 4000000000, "stoppedAt": 4000000600}"#)
            )
            #expect(future.status == .badRequest)
            let unstopped = try await client.execute(
                uri: "/api/projects/\(project.id)/activities", method: .post, headers: jsonHeaders,
                body: json(#"{"startedAt": \#(now - 100)}"#)
            )
            #expect(unstopped.status == .badRequest)
            let deleted = try await client.execute(uri: "/api/activities/\(id)", method: .delete, headers: jsonHeaders)
            #expect(try decode(ProjectPayload.self, deleted).elapsedSeconds == 1_200)
            let missing = try await client.execute(uri: "/api/activities/\(id)", method: .delete, headers: jsonHeaders)
            #expect(missing.status == .notFound)
            let badCursor = try await client.execute(uri: "/api/projects/\(project.id)/activities?after=x", method: .get)
            #expect(badCursor.status == .badRequest)
            let badLimit = try await client.execute(uri: "/api/projects/\(project.id)/activities?limit=abc", method: .get)
            #expect(badLimit.status == .badRequest)
            let noProject = try await client.execute(uri: "/api/projects/999/activities", method: .get)
            #expect(noProject.status == .notFound)
            #expect(tracker.store.state.projects.map(\.elapsedSeconds) == [1_200])

            // The days of those activities, in UTC: what `timetrack report --json` prints.
            let day = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: now - 10_800)).prefix(10)
            let report = try decode(
                TimeReport.self, try await client.execute(uri: "/api/report?day=\(day)&days=2&tz=UTC", method: .get)
            )
            #expect(report.total == 1_200 && report.days.count == 2)
            #expect(report.timeZone == "UTC")
            for query in ["tz=Mars", "days=0", "days=abc", "day=tomorrow"] {
                #expect(try await client.execute(uri: "/api/report?\(query)", method: .get).status == .badRequest)
            }
        }
    }
}
