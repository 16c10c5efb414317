import Foundation

/// How durations and times of day are shown in the terminal.
public enum ClockFormat {
    /// `h:mm:ss`, whole seconds, e.g. `1:02:03`.
    public static func duration(_ seconds: Double) -> String {
        let total = wholeSeconds(seconds)
        let minutes = total / 60 % 60, secondsPart = total % 60
        return "\(total / 3600):\(minutes < 10 ? "0" : "")\(minutes):\(secondsPart < 10 ? "0" : "")\(secondsPart)"
    }

    /// `seconds` rounded down, at least 0. Clamped: a time another program wrote (a year 1e20 away) must show as a
    /// long time, not trap.
    public static func wholeSeconds(_ seconds: Double) -> Int {
        seconds.isFinite ? Int(min(max(0, seconds), 1e15).rounded(.down)) : 0
    }

    /// The local time of day, `HH:mm`.
    public static func timeOfDay(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        return formatter.string(from: date)
    }
}
