import ArgumentParser
import Foundation
import Statehouse
import TimeTrackerCore

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the projects, updated as soon as anything changes them.",
        discussion: """
            In a terminal, the view is redrawn on every change and running timers tick each second. When the output \
            is not a terminal, the table is printed again after each change.
            """
    )

    @OptionGroup var database: DatabaseOptions

    private enum Event: Sendable {
        case changed([ProjectSummary])
        case lost
        case tick
    }

    func run() async throws {
        let tracker = try database.openTracker()
        let interactive = isatty(STDOUT_FILENO) == 1
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(2))
        // The view re-renders only when the store says the projects changed, whoever changed the database.
        let subscription = tracker.store.subscribe(\.projects) { continuation.yield(.changed($0)) }
        let problems = tracker.store.subscribe(\.problem) { problem in
            if problem != nil { continuation.yield(.lost) }
        }
        let ticking = Task {
            while interactive, !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                continuation.yield(.tick)
            }
        }
        defer {
            subscription.cancel()
            problems.cancel()
            ticking.cancel()
        }
        var projects: [ProjectSummary] = []
        for await event in events {
            // The file was removed or replaced: this view would show a database nobody writes to any more.
            if case .lost = event { throw TrackerError.databaseGone(path: tracker.path) }
            if case .changed(let changed) = event { projects = changed }
            if interactive {
                // Home, clear the screen, draw: the ticking is display only, nothing is read or written.
                let table = ProjectTable(projects, now: Date()).text
                try StandardOutput.show("\u{1B}[H\u{1B}[2J" + "timetrack — \(tracker.path) — Ctrl-C to quit\n\n" + table)
            } else if case .changed = event {
                try StandardOutput.show(ProjectTable(projects).text + "\n")
            }
        }
    }
}
