import ArgumentParser
import Foundation
import Statehouse
import TimeTrackerCore
import UnixSignals

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the projects, updated as soon as anything changes them.",
        discussion: """
            In a terminal, a full-screen view: running timers tick each second, ↑/↓ (or j/k) select a project, space \
            starts or stops it, u undoes the last change, q quits; the terminal is restored however it ends (q, \
            Ctrl-C, a kill). When the output is not a terminal, the table is printed again after each change.
            """
    )

    @OptionGroup var database: DatabaseOptions

    private enum Event: Sendable {
        case changed([ProjectSummary], problem: String?)
        case tick
    }

    func run() async throws {
        try await database.withTracker(following: true) { tracker in try await watch(tracker) }
    }

    private func watch(_ tracker: TimeTracker) async throws {
        if let terminal = RawTerminal() {
            defer { terminal.restore() }
            try await FullScreenWatch(tracker: tracker, terminal: terminal).run()
            return
        }
        let interactive = isatty(STDOUT_FILENO) == 1
        // The view re-renders only when the store says the projects changed (or a problem arose), whoever changed the
        // database.
        let changes = tracker.store.values(
            select: { ($0.projects, $0.problem) }, isDuplicate: ==, bufferingPolicy: .bufferingNewest(1)
        )
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(2))
        let forwarding = Task {
            for await (projects, problem) in changes { continuation.yield(.changed(projects, problem: problem)) }
            continuation.finish()
        }
        let ticking = Task {
            while interactive, !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                continuation.yield(.tick)
            }
        }
        defer {
            forwarding.cancel()
            ticking.cancel()
        }
        var projects: [ProjectSummary] = []
        for await event in events {
            if case .changed(let changed, let problem) = event {
                // The file was removed or replaced: this view would show a database nobody writes to any more.
                if problem != nil { throw TrackerError.databaseGone(path: tracker.path) }
                projects = changed
            }
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
