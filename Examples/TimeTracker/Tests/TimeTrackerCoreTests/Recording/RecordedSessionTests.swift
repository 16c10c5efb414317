import Foundation
import GRDB
import Statehouse
import StatehouseTesting
import Synchronization
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// `timetrack record` and `make-test`: a recorder follows every tracker's actions through the database's log, and
/// ``TrackerRules`` replays them to exactly the contents the database holds; the session becomes a test.
@Suite("A recorded session", .serialized)
struct RecordedSessionTests {
    static let generatedFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Generated/ReplaysARecordedTimetrackSession.swift")

    /// Two trackers (two processes) act in turn, a refused action among them; the recorder has every applied action,
    /// in order, and replaying them from the contents it started from gives the database's contents.
    @Test(arguments: TestBackend.allCases)
    func theRulesReplayWhatEveryTrackerDid(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let first = try await database.tracker(clock: clock)
        let second = try await database.tracker(clock: clock)
        try await first.perform(.addProject(name: "Before"))
        var recorder = try await first.sessionRecorder()
        let writing = try #require(try await first.perform(.addProject(name: "Writing"))).id
        try await second.perform(.startActivity(projectID: writing))
        clock.advance(by: 90)
        try await first.perform(.stopActivity(projectID: writing))
        try await second.perform(.renameProject(id: writing, name: "Essays"))
        await #expect(throws: TrackerError.duplicateName(existing: "Before")) {
            try await first.perform(.addProject(name: "before"))
        }
        try await second.perform(.deleteProject(id: writing))
        try await first.perform(.undo)
        try await second.perform(.redo)
        try await first.perform(.restoreProject(id: writing))
        #expect(try await recorder.catchUp() == 8)
        #expect(recorder.recording.actions.map(\.action.action) == [
            .addProject(name: "Writing"), .startActivity(projectID: writing), .stopActivity(projectID: writing),
            .renameProject(id: writing, name: "Essays"), .deleteProject(id: writing), .undo, .redo,
            .restoreProject(id: writing),
        ])
        let replayed = Self.replay(recorder.recording)
        #expect(replayed == (try await first.sessionRecorder().recording.initialState))
        #expect(replayed.projects.map(\.name) == ["Before", "Essays"])
        let durations = replayed.activities.map { activity in activity.stoppedAt.map { $0 - activity.startedAt } }
        #expect(durations == [90])
        #expect(try await recorder.catchUp() == 0)
    }

    /// Writers racing each other while the recorder catches up between their commits: each catch-up reads the log
    /// and the contents at one instant, so the replay always explains them, and ends at the database's contents.
    @Test(arguments: TestBackend.allCases)
    func catchingUpWhileTrackersWriteAtOnceMissesNothing(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let trackers = [try await database.tracker(), try await database.tracker()]
        var recorder = try await trackers[0].sessionRecorder()
        let done = Atomic(false)
        let writers = Task {
            defer { done.store(true, ordering: .releasing) }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (number, tracker) in trackers.enumerated() {
                    group.addTask {
                        for round in 0..<15 {
                            let id = try #require(try await tracker.perform(.addProject(name: "T\(number)-\(round)"))).id
                            try await tracker.perform(.startActivity(projectID: id))
                            if round.isMultiple(of: 3) { try await tracker.perform(.deleteProject(id: id)) }
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var catchUps = 0
        while !done.load(ordering: .acquiring) {
            try await recorder.catchUp()
            catchUps += 1
        }
        try await writers.value
        try await recorder.catchUp()
        #expect(catchUps > 0)
        // Each writer: an add and a start a round, and a delete every third round.
        let applied = 2 * (15 * 2 + 5)
        #expect(recorder.recording.actions.count == applied)
        #expect(Self.replay(recorder.recording) == (try await trackers[0].sessionRecorder().recording.initialState))
    }

    /// A change no action explains (another program's write) cannot be replayed: the recorder says so, and keeps
    /// what it recorded before.
    @Test func aWriteByAnotherProgramStopsTheRecordingAndKeepsWhatItHas() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        var recorder = try await tracker.sessionRecorder()
        try await tracker.perform(.addProject(name: "Writing"))
        try await recorder.catchUp()
        try await database.otherProgram().write { try $0.execute(sql: "UPDATE project SET created = 0") }
        try await tracker.perform(.addProject(name: "Reading"))
        await #expect(throws: SessionRecorderError.unexplainedChange(afterActions: 1)) { try await recorder.catchUp() }
        #expect(recorder.recording.actions.map(\.action.action) == [.addProject(name: "Writing")])
        #expect(SessionRecorderError.unexplainedChange(afterActions: 1).description.contains("another program wrote to it"))
    }

    /// More actions between two catch-ups than the log keeps: the recorder says so rather than replay what is left.
    @Test func aRecorderThatFellBehindTheLogSaysSo() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        var recorder = try await tracker.sessionRecorder()
        try await database.otherProgram().write { db in
            for _ in 0..<1_000 { try db.execute(sql: #"INSERT INTO actionLog (action, at) VALUES ('{"undo":{}}', 0)"#) }
        }
        try await tracker.perform(.addProject(name: "Writing"))
        #expect(try database.count("actionLog") == 1_000)
        await #expect(throws: SessionRecorderError.fellBehind(afterActions: 0)) { try await recorder.catchUp() }
    }

    /// The rules refuse what the tracker refuses, and the reducer then leaves the contents as they were.
    @Test func theRulesRefuseWhatTheTrackerRefuses() throws {
        var contents = try TrackerRules.applying(LoggedAction(.addProject(name: "Writing"), at: 10), to: TrackerContents())
        #expect(throws: TrackerError.duplicateName(existing: "Writing")) {
            try TrackerRules.applying(LoggedAction(.addProject(name: "WRITING"), at: 20), to: contents)
        }
        #expect(throws: TrackerError.notRunning(project: "Writing")) {
            try TrackerRules.applying(LoggedAction(.stopActivity(projectID: 1), at: 20), to: contents)
        }
        let before = contents
        _ = TrackerRules.reducer.reduce(&contents, LoggedAction(.startActivity(projectID: 7), at: 20))
        #expect(contents == before)
        #expect(contents.projects.map(\.name) == ["Writing"] && contents.lastProjectID == 1)
    }

    /// A session file reads back as it was written; a line that is not a recorded action is named.
    @Test func aSessionFileReadsBackAndABadLineIsNamed() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        var recorder = try await tracker.sessionRecorder()
        try await tracker.perform(.addProject(name: "Writing"))
        try await tracker.perform(.startActivity(projectID: 1))
        try await recorder.catchUp()
        let file = database.directory.appendingPathComponent("session.jsonl")
        try SessionFile.write(recorder.recording, to: file)
        let read = try SessionFile.read(from: file)
        #expect(read.initialState == recorder.recording.initialState)
        #expect(read.actions.map(\.action) == recorder.recording.actions.map(\.action))
        try FileHandle(forWritingTo: file).appendingLine("{\"nonsense\": true}")
        #expect {
            try SessionFile.read(from: file)
        } throws: { error in
            String(describing: error).contains("Line 4 of \(file.path) is not a recorded action")
        }
    }

    /// `Generated/ReplaysARecordedTimetrackSession.swift` is what `make-test` writes for the session below (every
    /// kind of action, a clock set back); it compiles and passes here. Run with `STATEHOUSE_REGENERATE=1` to write it
    /// again after changing the rules on purpose.
    @Test func theGeneratedTestIsWhatMakeTestWrites() async throws {
        let database = TemporaryDatabase()
        let clock = TestClock()
        let tracker = try clock.tracker(at: database.path)
        var recorder = try await tracker.sessionRecorder()
        let id = try #require(try await tracker.perform(.addProject(name: "  Writing "))).id
        try await tracker.perform(.startActivity(projectID: id))
        clock.advance(by: 1_500)
        try await tracker.perform(.stopActivity(projectID: id))
        clock.advance(by: -600)
        try await tracker.perform(.startActivity(projectID: id))
        try await tracker.perform(.renameProject(id: id, name: "Essays"))
        try await tracker.perform(.deleteProject(id: id))
        try await tracker.perform(.undo)
        try await recorder.catchUp()
        let source = try recorder.recording.testSource(
            named: "replaysARecordedTimetrackSession", reducer: TrackerRules.reducer, writtenAs: "TrackerRules.reducer",
            imports: ["TimeTrackerCore"]
        )
        if ProcessInfo.processInfo.environment["STATEHOUSE_REGENERATE"] == "1" {
            try source.write(to: Self.generatedFile, atomically: true, encoding: .utf8)
        }
        #expect(source == (try String(contentsOf: Self.generatedFile, encoding: .utf8)), "make-test now writes:\n\(source)")
    }

    private static func replay(_ recording: Recording<TrackerContents, LoggedAction>) -> TrackerContents {
        recording.state(afterFirst: recording.actions.count) { TrackerRules.reducer.reduce(&$0, $1) }
    }
}

extension FileHandle {
    fileprivate func appendingLine(_ line: String) throws {
        try seekToEnd()
        try write(contentsOf: Data((line + "\n").utf8))
        try close()
    }
}
