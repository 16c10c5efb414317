import ArgumentParser
import Foundation
import Statehouse
import TimeTrackerCore
import UnixSignals

struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record every change to the tracker, by any process, until Ctrl-C.",
        discussion: """
            Run it beside `timetrack serve` (or any other timetrack command): each action applied to the database \
            from now on is added to FILE, with its time, as soon as it is made. `timetrack make-test FILE` then \
            prints a test that replays the session.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @Argument(help: "Where to write the session (JSON lines); it is replaced.") var file: String

    private enum Event: Sendable {
        case changed
        case stop
    }

    func validate() throws {
        try database.refuseRemote("record", because: "it records the database's own log; run it where the database is.")
    }

    func run() async throws {
        let tracker = try await database.openTracker()
        let url = URL(fileURLWithPath: file)
        var recorder = try await tracker.sessionRecorder()
        try SessionFile.write(recorder.recording, to: url)
        StandardOutput.report("Recording every change to \(tracker.path) in \(file). Ctrl-C stops.\n")
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(2))
        let changes = tracker.store.values(select: { $0 }, isDuplicate: ==, bufferingPolicy: .bufferingNewest(1))
        let following = Task {
            for await _ in changes { continuation.yield(.changed) }
        }
        let stopping = Task {
            for await _ in await UnixSignalsSequence(trapping: .sigint, .sigterm) {
                continuation.yield(.stop)
                return
            }
        }
        defer {
            following.cancel()
            stopping.cancel()
        }
        for await event in events {
            // A change that left the projects as they were (a rename to the same name) is caught up at the next.
            try await recorder.catchUp()
            try SessionFile.write(recorder.recording, to: url)
            if case .stop = event { break }
        }
        StandardOutput.report("Recorded \(recorder.recording.actions.count) actions in \(file).\n")
    }
}
