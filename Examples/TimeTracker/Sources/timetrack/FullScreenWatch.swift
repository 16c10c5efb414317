import Foundation
import Statehouse
import TimeTrackerCore
import UnixSignals

/// `watch` in a terminal: a live list to start and stop projects from, until `q`, Ctrl-C or a kill.
struct FullScreenWatch {
    let tracker: TimeTracker
    let terminal: RawTerminal

    private enum Event: Sendable {
        case changed([ProjectSummary], problem: String?)
        case tick
        case key(RawTerminal.Key)
        case stop
    }

    func run() async throws {
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(16))
        let changes = tracker.store.values(
            select: { ($0.projects, $0.problem) }, isDuplicate: ==, bufferingPolicy: .bufferingNewest(1)
        )
        let feeds = [
            Task {
                for await (projects, problem) in changes { continuation.yield(.changed(projects, problem: problem)) }
            },
            Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .seconds(1))
                    continuation.yield(.tick)
                }
            },
            Task {
                for await key in terminal.keys() { continuation.yield(.key(key)) }
            },
            // Ctrl-C, a kill, a closed terminal: the loop ends, and `watch` restores the terminal on its way out.
            Task {
                for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm, .sighup) {
                    continuation.yield(.stop)
                }
            },
        ]
        defer { feeds.forEach { $0.cancel() } }
        var screen = WatchScreen(path: tracker.path, projects: tracker.store.state.projects, selected: 0, message: "")
        var selectedID = screen.projects.first?.id
        try StandardOutput.show(screen.text(at: Date()))
        for await event in events {
            switch event {
            case .changed(let projects, let problem):
                if problem != nil { throw TrackerError.databaseGone(path: tracker.path) }
                screen.projects = projects
            case .tick:
                break
            case .key(.quit), .stop:
                return
            case .key(.up), .key(.down):
                guard !screen.projects.isEmpty else { break }
                let step = if case .key(.up) = event { -1 } else { 1 }
                let index = screen.projects.firstIndex { $0.id == selectedID } ?? 0
                selectedID = screen.projects[min(max(index + step, 0), screen.projects.count - 1)].id
            case .key(.toggle):
                guard let project = screen.projects.first(where: { $0.id == selectedID }) else { break }
                screen.message = await outcome(
                    project.isRunning ? .stopActivity(projectID: project.id) : .startActivity(projectID: project.id),
                    done: "\(project.isRunning ? "Stopped" : "Started") \"\(project.name)\"."
                )
            case .key(.undo):
                let name = tracker.store.state.undoName ?? "the last change"
                screen.message = await outcome(.undo, done: "Undid \"\(name)\".")
            }
            if selectedID == nil || !screen.projects.contains(where: { $0.id == selectedID }) {
                selectedID = screen.projects.first?.id
            }
            screen.selected = screen.projects.firstIndex { $0.id == selectedID } ?? 0
            try StandardOutput.show(screen.text(at: Date()))
        }
    }

    /// Performs `action`; says `done`, or why it was refused.
    private func outcome(_ action: TrackerAction, done: String) async -> String {
        do throws(TrackerError) {
            try await tracker.perform(action)
            return done
        } catch {
            return error.description
        }
    }
}
