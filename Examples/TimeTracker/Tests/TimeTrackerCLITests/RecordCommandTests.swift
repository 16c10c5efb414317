import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// `timetrack record FILE` beside other processes, then `timetrack make-test FILE`.
@Suite("record and make-test", .serialized)
struct RecordCommandTests {
    /// What other processes do while `record` runs reaches the file as it happens; Ctrl-C (SIGINT) ends it with the
    /// file whole, and `make-test` prints a test with one step per action.
    @Test func aRecordedSessionOfOtherProcessesBecomesATest() async throws {
        let database = TemporaryDatabase()
        let db = ["--db", database.path]
        #expect(try TimetrackProcess.run(["add", "Writing"] + db).status == 0)
        let file = database.directory.appendingPathComponent("session.jsonl")
        let recorder = try TimetrackProcess(["record", file.path] + db)
        #expect(await eventually { recorder.output.contains("Ctrl-C stops.") })
        for command in [["start", "Writing"], ["rename", "Writing", "Essays"], ["stop", "Essays"], ["undo"]] {
            #expect(try TimetrackProcess.run(command + db).status == 0)
        }
        #expect(await eventually { (try? SessionFile.read(from: file))?.actions.count == 4 })
        recorder.signal(SIGINT)
        #expect(recorder.waitForExit() == 0)
        #expect(recorder.output.hasSuffix("Recorded 4 actions in \(file.path).\n"))
        #expect(try SessionFile.read(from: file).initialState.projects.map(\.name) == ["Writing"])

        let test = try TimetrackProcess.run(["make-test", file.path, "--name", "replaysTheSession"])
        #expect(test.status == 0)
        #expect(test.output.contains("@Test func replaysTheSession() async throws {"))
        #expect(test.output.contains("reducer: TrackerRules.reducer"))
        #expect(test.output.components(separatedBy: "await store.send(").count - 1 == 4)
    }

    /// A file that is not a session is refused with the line that is wrong, and no test is printed.
    @Test func makeTestNamesTheLineThatIsNotASession() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let file = database.directory.appendingPathComponent("notes.txt")
        try Data("{\"date\": 1}\n".utf8).write(to: file)
        let result = try TimetrackProcess.run(["make-test", file.path])
        #expect(result.status != 0 && result.output.isEmpty)
        #expect(result.errors.contains("Line 1 of \(file.path) is not a session's start"))
    }
}
