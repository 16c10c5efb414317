import Foundation
import TimeTrackerCore

/// What `watch` draws in a terminal: the projects with live timers, the selected one marked, the keys, and the
/// outcome of the last key.
struct WatchScreen {
    var path: String
    var projects: [ProjectSummary]
    var selected: Int
    var message: String

    func text(at now: Date) -> String {
        var lines = ["timetrack — \(path)", ""]
        if projects.isEmpty {
            lines.append("No projects yet. Add one with: timetrack add NAME")
        } else {
            let table = ProjectTable(projects, now: now).text.split(separator: "\n").map(String.init)
            lines.append("  " + table[0])
            for (index, row) in table.dropFirst().enumerated() {
                // The selected row in reverse video, with a marker for terminals that show none.
                lines.append(index == selected ? "\u{1B}[7m> \(row)\u{1B}[0m" : "  \(row)")
            }
        }
        lines += ["", "↑/↓ or j/k select · space starts or stops · u undoes · q quits", message]
        // Home, then each line with the rest of it cleared, then the rest of the screen.
        return "\u{1B}[H" + lines.map { $0 + "\u{1B}[K" }.joined(separator: "\r\n") + "\u{1B}[J"
    }
}
