import Foundation

/// Time per project and per day over a span of days, in a time zone: what `timetrack report` prints and the page's
/// week chart draws.
///
/// A day is the zone's calendar day, midnight to midnight, so a day a clock change shortens or lengthens counts 23
/// or 25 hours. An activity is split at midnights; a running one counts until `now`. Seconds are whole, rounded down
/// per day and project, and every total is the sum of those: the totals add up wherever they are shown.
public struct TimeReport: Codable, Equatable, Sendable {
    public struct ProjectTime: Codable, Equatable, Sendable {
        public var id: Int64
        public var name: String
        public var seconds: Int
    }

    public struct Day: Codable, Equatable, Sendable {
        /// `2026-11-28`.
        public var date: String
        /// The projects with time that day, by name.
        public var projects: [ProjectTime]
        public var total: Int
    }

    /// The zone's identifier.
    public var timeZone: String
    public var days: [Day]
    /// Each project's time over all the days, by name; projects without time are left out.
    public var projects: [ProjectTime]
    public var total: Int

    /// The report of `days` days from the one containing `start`.
    ///
    /// - Parameters:
    ///   - activities: At least those that share a moment with the span (others count nothing).
    ///   - names: Each project's name by id.
    public init(
        days count: Int, from start: Date, in zone: TimeZone, activities: [ActivityRecord], names: [Int64: String],
        now: Date
    ) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let label = DateFormatter()
        label.locale = Locale(identifier: "en_US_POSIX")
        label.timeZone = zone
        label.dateFormat = "yyyy-MM-dd"
        var dayStart = calendar.startOfDay(for: start)
        var days: [Day] = []
        for _ in 0..<max(count, 0) {
            // The next day's first moment: a day lasts 23 to 25 hours, so 30 hours on is in it, and its start is
            // where its clock began, 01:00 where a clock change skips midnight (adding a day to a start at 01:00
            // would give 01:00, an hour into that next day).
            let dayEnd = calendar.startOfDay(for: dayStart.addingTimeInterval(30 * 3_600))
            var seconds: [Int64: Double] = [:]
            for activity in activities {
                let overlap = min(activity.stoppedAt ?? now, dayEnd).timeIntervalSince(max(activity.startedAt, dayStart))
                if overlap > 0 { seconds[activity.projectID, default: 0] += overlap }
            }
            let projects = Self.sorted(seconds.map { ProjectTime(id: $0.key, name: names[$0.key] ?? "", seconds: Int($0.value)) })
            days.append(Day(date: label.string(from: dayStart), projects: projects, total: projects.map(\.seconds).reduce(0, +)))
            dayStart = dayEnd
        }
        var totals: [Int64: ProjectTime] = [:]
        for project in days.flatMap(\.projects) {
            totals[project.id, default: ProjectTime(id: project.id, name: project.name, seconds: 0)].seconds += project.seconds
        }
        self.timeZone = zone.identifier
        self.days = days
        self.projects = Self.sorted(Array(totals.values))
        total = days.map(\.total).reduce(0, +)
    }

    /// The day `2026-11-28` in `zone`, as the moment a report starts from: its noon, which every day has (a day whose
    /// midnight a clock change skips, as Santiago's does, has none). `nil` for text that is no day.
    public static func day(_ text: String, in zone: TimeZone) -> Date? {
        let format = DateFormatter()
        format.locale = Locale(identifier: "en_US_POSIX")
        format.timeZone = zone
        format.dateFormat = "yyyy-MM-dd HH:mm"
        return format.date(from: text.trimmingCharacters(in: .whitespaces) + " 12:00")
    }

    private static func sorted(_ projects: [ProjectTime]) -> [ProjectTime] {
        projects.filter { $0.seconds > 0 }.sorted { (ProjectName.key(for: $0.name), $0.id) < (ProjectName.key(for: $1.name), $1.id) }
    }
}
