import Foundation
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// `timetrack report`: an activity started and stopped with the process's clock set by `faketime`, across midnight
/// and the night New York's clock goes back, counts in each day what that day held.
@Suite("timetrack report", .serialized)
struct ReportCommandTests {
    private static func run(at time: String, _ arguments: [String]) throws -> Int32 {
        try FakedClock.run(at: "@" + time, arguments, environment: ["TZ": "America/New_York"])
    }

    @Test(.enabled(if: FakedClock.isAvailable, "needs Debian's faketime"))
    func dayTotalsAcrossMidnightAndAClockChange() throws {
        let database = TemporaryDatabase()
        let db = ["--db", database.path]
        #expect(try TimetrackProcess.run(["add", "Writing"] + db).status == 0)
        #expect(try Self.run(at: "2026-10-31 23:00:00", ["start", "Writing"] + db) == 0)
        #expect(try Self.run(at: "2026-11-01 23:30:00", ["stop", "Writing"] + db) == 0)
        let zone = ["--tz", "America/New_York"]
        let printed = try TimetrackProcess.run(["report", "--week", "--day", "2026-11-01", "--json"] + zone + db).output
        let report = try JSONDecoder().decode(TimeReport.self, from: Data(printed.utf8))
        let days = Dictionary(uniqueKeysWithValues: report.days.map { ($0.date, $0.total) })
        // From 23:00 to midnight, then a day of 25 hours until 23:30; the start and the stop each come a moment after
        // the faked time, as the command starts.
        #expect((3_540...3_600).contains(days["2026-10-31"] ?? 0), "\(days)")
        #expect((88_200..<88_260).contains(days["2026-11-01"] ?? 0), "\(days)")
        #expect(report.total == report.days.map(\.total).reduce(0, +))
        let csv = try TimetrackProcess.run(["report", "--day", "2026-10-31", "--csv"] + zone + db).output
        #expect(csv == "date,project,seconds\n2026-10-31,Writing,\(days["2026-10-31"] ?? 0)\n", "\(csv)")
    }

    @Test func reportRefusesBothFormatsAndABadDay() throws {
        let database = TemporaryDatabase()
        let both = try TimetrackProcess.run(["report", "--json", "--csv", "--db", database.path])
        #expect(both.status != 0 && both.errors.contains("Choose --json or --csv, not both."))
        let badDay = try TimetrackProcess.run(["report", "--day", "yesterday", "--db", database.path])
        #expect(badDay.status != 0 && badDay.errors.contains("Cannot read \"yesterday\" as a day"))
        let empty = try TimetrackProcess.run(["report", "--day", "2026-11-28", "--tz", "Europe/Paris", "--db", database.path])
        #expect(empty.output == "2026-11-28 (Europe/Paris): no time tracked.\n")
        // A day whose midnight the clock skips is a day; UTC is named as given.
        let skipped = try TimetrackProcess.run(["report", "--day", "2025-09-07", "--tz", "America/Santiago", "--db", database.path])
        #expect(skipped.output == "2025-09-07 (America/Santiago): no time tracked.\n")
        let utc = try TimetrackProcess.run(["report", "--day", "2026-11-28", "--tz", "UTC", "--db", database.path])
        #expect(utc.output == "2026-11-28 (UTC): no time tracked.\n")
    }
}
