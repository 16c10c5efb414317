import Foundation
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// `history`, `log`, `edit` and `delete-activity`: a project's activities from the command line, times read and shown
/// in `--tz`.
@Suite("Activities from the command line")
struct ActivityCommandTests {
    @Test func logEditAndDeleteAnActivity() throws {
        let database = TemporaryDatabase()
        let db = ["--db", database.path]
        _ = try TimetrackProcess.run(["add", "Writing"] + db)
        let logged = try TimetrackProcess.run(
            ["log", "writing", "--from", "2026-11-28 09:00", "--to", "2026-11-28 10:30", "--tz", "UTC"] + db
        )
        #expect(logged.output == "Logged 1:30:00 on \"Writing\" (2026-11-28 09:00 to 2026-11-28 10:30).\n")
        let history = try TimetrackProcess.run(["history", "Writing", "--tz", "Europe/Paris"] + db)
        #expect(history.output == "ID  START             STOP              DURATION\n1   2026-11-28 10:00  2026-11-28 11:30  1:30:00\n")
        let listed = try JSONDecoder().decode(
            [ActivityPayload].self, from: Data(try TimetrackProcess.run(["history", "Writing", "--json"] + db).output.utf8)
        )
        #expect(listed.map(\.id) == [1] && listed[0].stoppedAt == 1_795_861_800)
        let edited = try TimetrackProcess.run(
            ["edit", "1", "--from", "2026-11-28T10:00:00+01:00", "--to", "2026-11-28 10:15", "--tz", "UTC"] + db
        )
        #expect(edited.output == "Activity 1 of \"Writing\" is now 2026-11-28 09:00 to 2026-11-28 10:15.\n")
        #expect(try TimetrackProcess.run(["undo"] + db).output == "Undid \"Edit activity of Writing\".\n")
        #expect(try TimetrackProcess.run(["delete-activity", "1"] + db).output == "Deleted activity 1 of \"Writing\".\n")
        #expect(try TimetrackProcess.run(["history", "Writing"] + db).output == "No activities yet.\n")
    }

    @Test(arguments: [
        (["log", "Writing", "--from", "2999-01-01 09:00", "--to", "2999-01-01 10:00"], "cannot start or stop in the future"),
        (["log", "Writing", "--from", "yesterday", "--to", "10:00"], "Cannot read \"yesterday\" as a time"),
        (["history", "Writing", "--tz", "Mars/Olympus"], "\"Mars/Olympus\" is not a time zone"),
        (["edit", "7", "--from", "09:00", "--to", "09:30"], "There is no activity with id 7."),
        (["history", "Nope"], "There is no project named \"Nope\"."),
    ])
    func refusalsSayWhatIsWrong(arguments: [String], message: String) throws {
        let database = TemporaryDatabase()
        _ = try TimetrackProcess.run(["add", "Writing", "--db", database.path])
        let result = try TimetrackProcess.run(arguments + ["--db", database.path])
        #expect(result.status != 0 && result.output.isEmpty)
        #expect(result.errors.contains(message))
    }
}
