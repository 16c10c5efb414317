import Foundation

/// How durations and times of day are shown in the terminal.
public enum ClockFormat {
    /// `h:mm:ss`, whole seconds, e.g. `1:02:03`.
    public static func duration(_ seconds: Double) -> String {
        let total = Int(max(0, seconds).rounded(.down))
        let minutes = total / 60 % 60, secondsPart = total % 60
        return "\(total / 3600):\(minutes < 10 ? "0" : "")\(minutes):\(secondsPart < 10 ? "0" : "")\(secondsPart)"
    }

    /// The local time of day, `HH:mm`.
    public static func timeOfDay(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm"
        return formatter.string(from: date)
    }
}
