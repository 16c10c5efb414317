import Foundation
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// Time per project and day: days are the zone's midnight to midnight (23 or 25 hours when the clock changes), an
/// activity is split at midnight, a running one counts until now, and every total is the sum of what it totals.
@Suite("Time reports")
struct TimeReportTests {
    private static let newYork = TimeZone(identifier: "America/New_York")!

    /// 2026-11-01 in New York: the clock goes back at 2 a.m., so the day has 25 hours.
    private static func newYork(_ text: String) -> Date {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = newYork
        format.dateFormat = "yyyy-MM-dd HH:mm"
        return format.date(from: text)!
    }

    private static func activity(_ id: Int64, project: Int64 = 1, _ start: String, _ stop: String?) -> ActivityRecord {
        ActivityRecord(id: id, projectID: project, startedAt: newYork(start), stoppedAt: stop.map(newYork))
    }

    @Test func anActivityAcrossMidnightAndAClockChangeIsSplitIntoItsDays() {
        let report = TimeReport(
            days: 3, from: Self.newYork("2026-10-31 12:00"), in: Self.newYork,
            activities: [Self.activity(1, "2026-10-31 23:00", "2026-11-02 00:30")], names: [1: "Writing"],
            now: Self.newYork("2026-11-05 00:00")
        )
        #expect(report.days.map(\.date) == ["2026-10-31", "2026-11-01", "2026-11-02"])
        let hours25 = 25 * 3_600
        #expect(report.days.map(\.total) == [3_600, hours25, 1_800])
        #expect(report.projects.map(\.name) == ["Writing"])
        #expect(report.projects.map(\.seconds) == [3_600 + hours25 + 1_800])
        #expect(report.total == report.days.map(\.total).reduce(0, +))
    }

    /// 2026-03-08: the clock goes forward at 2 a.m., a day of 23 hours.
    @Test func aDayTheClockGoesForwardHas23Hours() {
        let report = TimeReport(
            days: 1, from: Self.newYork("2026-03-08 10:00"), in: Self.newYork,
            activities: [Self.activity(1, "2026-03-07 22:00", "2026-03-09 02:00")], names: [1: "Writing"],
            now: Self.newYork("2026-03-10 00:00")
        )
        #expect(report.days.map(\.total) == [23 * 3_600])
    }

    /// 2025-09-07 in Santiago: the clock skips from midnight to 01:00, so the day begins at 01:00 and has 23 hours,
    /// and the next begins at midnight again.
    @Test func aDayWhoseMidnightTheClockSkipsHas23HoursAndTheNextStartsAtMidnight() throws {
        let santiago = try #require(TimeZone(identifier: "America/Santiago"))
        let report = TimeReport(
            days: 3, from: Date(timeIntervalSince1970: 1_757_160_000), in: santiago,  // 2025-09-06 08:00 there
            activities: [ActivityRecord(
                id: 1, projectID: 1, startedAt: Date(timeIntervalSince1970: 1_756_684_800),  // 2025-09-01 UTC
                stoppedAt: Date(timeIntervalSince1970: 1_757_635_200)  // 2025-09-12 UTC
            )],
            names: [1: "Writing"], now: Date(timeIntervalSince1970: 1_760_000_000)
        )
        #expect(report.days.map(\.date) == ["2025-09-06", "2025-09-07", "2025-09-08"])
        #expect(report.days.map(\.total) == [86_400, 82_800, 86_400])
    }

    /// A running activity counts until now; seconds are whole per day and project, and the totals are their sums.
    @Test func aRunningActivityCountsUntilNowAndTotalsAddUp() {
        let report = TimeReport(
            days: 1, from: Self.newYork("2026-11-10 00:00"), in: Self.newYork,
            activities: [
                Self.activity(1, "2026-11-10 09:00", nil),
                ActivityRecord(id: 2, projectID: 2, startedAt: Self.newYork("2026-11-10 08:00"),
                               stoppedAt: Self.newYork("2026-11-10 08:00").addingTimeInterval(0.7)),
                ActivityRecord(id: 3, projectID: 2, startedAt: Self.newYork("2026-11-10 08:01"),
                               stoppedAt: Self.newYork("2026-11-10 08:01").addingTimeInterval(0.7)),
            ],
            names: [1: "Writing", 2: "Reading"], now: Self.newYork("2026-11-10 09:30")
        )
        #expect(report.projects.map(\.name) == ["Reading", "Writing"])
        #expect(report.projects.map(\.seconds) == [1, 1_800])
        #expect(report.total == 1_801)
    }

    /// Through a tracker on either database: only the activities that share a moment with the span count.
    @Test(arguments: TestBackend.allCases)
    func aTrackersReportCountsItsActivitiesInTheSpan(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        let zone = TimeZone(identifier: "UTC")!
        let midnight = Date(timeIntervalSince1970: (clock.now.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400)
        try await tracker.perform(.addActivity(
            projectID: id, startedAt: midnight.addingTimeInterval(-86_400 - 600), stoppedAt: midnight.addingTimeInterval(-86_400 + 600)
        ))
        try await tracker.perform(.startActivity(projectID: id))
        clock.advance(by: 90)
        let report = try await tracker.report(days: 2, from: midnight.addingTimeInterval(-86_400), in: zone)
        // Yesterday the ten minutes after midnight; today the running activity's 90 seconds so far.
        #expect(report.days.map(\.total) == [600, 90])
        #expect(report.total == report.days.map(\.total).reduce(0, +))
    }
}
