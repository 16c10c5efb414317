import ArgumentParser
import Foundation
import TimeTrackerCore

/// `--tz ZONE`: the time zone times are read and shown in.
struct TimeZoneOption: ParsableArguments {
    @Option(
        name: .customLong("tz"),
        help: ArgumentHelp("The time zone of the times read and shown (default: the system's).", valueName: "zone")
    )
    var identifier: String?

    func validate() throws {
        if let identifier, TimeZone(identifier: identifier) == nil {
            throw ValidationError("\"\(identifier)\" is not a time zone: use a name such as Europe/Paris or UTC.")
        }
    }

    var zone: TimeZone { identifier.flatMap(TimeZone.init(identifier:)) ?? .current }

    /// `date` as `2026-11-28 14:30` in the zone.
    func text(_ date: Date) -> String {
        formatter("yyyy-MM-dd HH:mm").string(from: date)
    }

    /// A time typed on the command line: `14:30` (today, in the zone), `2026-11-28 14:30` (in the zone), or ISO 8601
    /// with its own offset (`2026-11-28T14:30:00+01:00`).
    func date(_ text: String, now: Date = Date()) throws -> Date {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        for format in ["yyyy-MM-dd HH:mm", "yyyy-MM-dd HH:mm:ss"] {
            if let date = formatter(format).date(from: trimmed) { return date }
        }
        // A time in Z must read back as it was written: 2026-02-30T10:00:00Z is no day, not March 2.
        let iso = ISO8601DateFormatter()
        if let date = iso.date(from: trimmed), !trimmed.hasSuffix("Z") || iso.string(from: date) == trimmed { return date }
        let clock = trimmed.split(separator: ":", omittingEmptySubsequences: false)
        if (2...3).contains(clock.count), let hour = Int(clock[0]), let minute = Int(clock[1]),
           let second = clock.count == 3 ? Int(clock[2]) : 0,
           (0..<24).contains(hour), (0..<60).contains(minute), (0..<60).contains(second) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = zone
            var day = calendar.dateComponents([.year, .month, .day], from: now)
            (day.hour, day.minute, day.second) = (hour, minute, second)
            if let date = calendar.date(from: day) { return date }
        }
        throw ValidationError(
            "Cannot read \"\(text)\" as a time: write 14:30 (today), 2026-11-28 14:30, or 2026-11-28T14:30:00+01:00."
        )
    }

    /// A day typed on the command line, `2026-11-28` (see ``TimeReport/day(_:in:)``).
    func day(_ text: String) throws -> Date {
        guard let date = TimeReport.day(text, in: zone) else {
            throw ValidationError("Cannot read \"\(text)\" as a day: write 2026-11-28.")
        }
        return date
    }

    private func formatter(_ format: String) -> DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = zone
        formatter.dateFormat = format
        return formatter
    }
}
