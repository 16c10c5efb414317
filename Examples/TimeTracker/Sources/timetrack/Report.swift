import ArgumentParser
import Foundation
import TimeTrackerCore

struct Report: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Time per project for a day (today by default) or its week, in a time zone.",
        discussion: """
            A day runs midnight to midnight in --tz (23 or 25 hours when the clock changes); weeks start on Monday. \
            A running activity counts until now.
            """
    )
    @OptionGroup var database: DatabaseOptions
    @OptionGroup var time: TimeZoneOption
    @Option(help: "The day, 2026-11-28 (default: today).") var day: String?
    @Flag(help: "The week (Monday to Sunday) that holds the day.") var week = false
    @Flag(help: #"Print JSON: {"days": [{"date", "projects": [{"id", "name", "seconds"}], "total"}], "projects", "total", "timeZone"}."#)
    var json = false
    @Flag(help: "Print CSV: date,project,seconds, one row a day and project.") var csv = false

    func validate() throws {
        guard !(json && csv) else { throw ValidationError("Choose --json or --csv, not both.") }
    }

    func run() async throws {
        var calendar = Calendar(identifier: .iso8601)
        calendar.timeZone = time.zone
        var start = try day.map { try time.day($0) } ?? Date()
        if week { start = calendar.dateInterval(of: .weekOfYear, for: start)?.start ?? start }
        var report = try await database.withTracker { tracker in
            try await tracker.report(days: week ? 7 : 1, from: start, in: time.zone)
        }
        // The zone as it was given: Foundation calls UTC "GMT".
        report.timeZone = time.identifier ?? time.zone.identifier
        if json {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            try StandardOutput.show(String(decoding: try encoder.encode(report), as: UTF8.self) + "\n")
        } else if csv {
            let rows = report.days.flatMap { day in day.projects.map { "\(day.date),\(Self.csvField($0.name)),\($0.seconds)\n" } }
            try StandardOutput.show("date,project,seconds\n" + rows.joined())
        } else {
            try StandardOutput.show(Self.table(report))
        }
    }

    /// One row a project, one column a day (with a week), and the totals.
    private static func table(_ report: TimeReport) -> String {
        let title = report.days.count == 1 ? report.days[0].date : "\(report.days[0].date) to \(report.days[report.days.count - 1].date)"
        guard !report.projects.isEmpty else { return "\(title) (\(report.timeZone)): no time tracked.\n" }
        let dayColumns = report.days.count > 1 ? report.days.map { String($0.date.suffix(5)) } : []
        func cells(_ seconds: (TimeReport.Day) -> Int, total: Int) -> [String] {
            (report.days.count > 1 ? report.days.map { ClockFormat.duration(Double(seconds($0))) } : [])
                + [ClockFormat.duration(Double(total))]
        }
        let rows = report.projects.map { project in
            [project.name] + cells({ day in day.projects.first { $0.id == project.id }?.seconds ?? 0 }, total: project.seconds)
        } + [["TOTAL"] + cells(\.total, total: report.total)]
        return "\(title) (\(report.timeZone))\n" + TextTable.text(header: ["PROJECT"] + dayColumns + ["TOTAL"], rows: rows)
    }

    /// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled.
    private static func csvField(_ text: String) -> String {
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0.isNewline }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}
