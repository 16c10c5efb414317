import Foundation
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

private struct Listed: Decodable, Equatable {
    var id: Int64
    var name: String
    var elapsedSeconds: Int
    var running: Bool
}

@Suite("timetrack on the command line", .serialized)
struct CLITests {
    @Test func addStartStopListDelete() throws {
        let database = TemporaryDatabase()
        let db = ["--db", database.path]
        #expect(try TimetrackProcess.run(["add", " Writing "] + db).output == "Added \"Writing\".\n")
        let started = try TimetrackProcess.run(["start", "writing"] + db)
        #expect(started.status == 0)
        #expect(started.output.hasPrefix("Started \"Writing\" at "))
        let running = try TimetrackProcess.run(["list", "--json"] + db)
        let listed = try JSONDecoder().decode([Listed].self, from: Data(running.output.utf8))
        #expect(listed.map(\.name) == ["Writing"] && listed[0].running)
        // Exactly the documented keys.
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(running.output.utf8)) as? [[String: Any]])
        #expect(Set(keys[0].keys) == ["id", "name", "elapsedSeconds", "running"])
        #expect(try TimetrackProcess.run(["stop", "WRITING"] + db).output.hasPrefix("Stopped \"Writing\": 0:00:0"))
        let table = try TimetrackProcess.run(["list"] + db).output
        #expect(table.hasPrefix("PROJECT"))
        #expect(table.contains("Writing") && table.contains("stopped"))
        #expect(try TimetrackProcess.run(["delete", "writing"] + db).output == "Deleted \"Writing\".\n")
        #expect(try TimetrackProcess.run(["list", "--json"] + db).output == "[]\n")
    }

    /// Each command is a process of its own: undo and redo take back and make again what an earlier one did, and
    /// deleting then undoing brings the project back with its activities.
    @Test func undoAndRedoAcrossProcesses() throws {
        let database = TemporaryDatabase()
        let db = ["--db", database.path]
        #expect(try TimetrackProcess.run(["add", "Writing"] + db).status == 0)
        #expect(try TimetrackProcess.run(["rename", "writing", "Essays"] + db).output == "Renamed \"Writing\" to \"Essays\".\n")
        #expect(try TimetrackProcess.run(["undo"] + db).output == "Undid \"Rename Writing\".\n")
        for command in [["start", "Writing"], ["stop", "Writing"], ["delete", "Writing"]] {
            #expect(try TimetrackProcess.run(command + db).status == 0)
        }
        #expect(try TimetrackProcess.run(["undo"] + db).output == "Undid \"Delete Writing\".\n")
        #expect(try database.count("activity") == 1)
        #expect(try TimetrackProcess.run(["undo"] + db).output == "Undid \"Stop Writing\".\n")
        #expect(try TimetrackProcess.run(["redo"] + db).output == "Redid \"Stop Writing\".\n")
        let listed = try JSONDecoder().decode([Listed].self, from: Data(try TimetrackProcess.run(["list", "--json"] + db).output.utf8))
        #expect(listed.map(\.name) == ["Writing"] && !listed[0].running)
        #expect(try TimetrackProcess.run(["add", "Reading"] + db).status == 0)
        let redo = try TimetrackProcess.run(["redo"] + db)
        #expect(redo.status != 0 && redo.output.isEmpty && redo.errors.contains("There is nothing to redo"))
    }

    @Test(arguments: [
        (["add", "Writing"], "already exists"),
        (["add", "   "], "needs a name"),
        (["start", "Nope"], "There is no project named \"Nope\"."),
        (["stop", "Writing"], "is not running"),
        (["delete", "Nope"], "There is no project named \"Nope\"."),
        (["rename", "Nope", "Other"], "There is no project named \"Nope\"."),
        (["rename", "Writing", " "], "needs a name"),
    ])
    func refusalsGoToStandardErrorWithAFailingStatus(arguments: [String], message: String) throws {
        let database = TemporaryDatabase()
        _ = try TimetrackProcess.run(["add", "Writing", "--db", database.path])
        let result = try TimetrackProcess.run(arguments + ["--db", database.path])
        #expect(result.status != 0)
        #expect(result.output.isEmpty)
        #expect(result.errors.contains(message))
        #expect(try database.count("project") == 1)
    }

    @Test func badUsageIsAnError() throws {
        let database = TemporaryDatabase()
        let port = try TimetrackProcess.run(["serve", "--port", "70000", "--db", database.path])
        #expect(port.status != 0 && port.errors.contains("between 0 and 65535"))
        let missing = try TimetrackProcess.run(["add"])
        #expect(missing.status != 0 && missing.errors.contains("Missing expected argument"))
    }

    @Test func theDefaultDatabaseIsUnderXDGDataHome() throws {
        let database = TemporaryDatabase()
        let dataHome = database.directory.appendingPathComponent("data").path
        #expect(try TimetrackProcess.run(["add", "Writing"], environment: ["XDG_DATA_HOME": dataHome]).status == 0)
        #expect(FileManager.default.fileExists(atPath: dataHome + "/timetrack/timetrack.sqlite"))
    }
}
