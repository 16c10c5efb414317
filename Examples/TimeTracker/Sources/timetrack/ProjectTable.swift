import Foundation
import TimeTrackerCore

/// The projects as a text table: name, elapsed time, status.
struct ProjectTable {
    var projects: [ProjectSummary]
    /// With a time, a running project's elapsed time includes its running activity up to then (the ticking view of
    /// `watch`); without, it counts finished activities only.
    var now: Date?

    init(_ projects: [ProjectSummary], now: Date? = nil) {
        self.projects = projects
        self.now = now
    }

    var text: String {
        guard !projects.isEmpty else { return "No projects yet. Add one with: timetrack add NAME\n" }
        let rows = projects.map { project in
            [
                project.name,
                ClockFormat.duration(now.map(project.elapsed(at:)) ?? project.elapsedSeconds),
                project.runningSince.map { "running since \(ClockFormat.timeOfDay($0))" } ?? "stopped",
            ]
        }
        return TextTable.text(header: ["PROJECT", "ELAPSED", "STATUS"], rows: rows)
    }
}
