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

    @Test(arguments: [
        (["add", "Writing"], "already exists"),
        (["add", "   "], "needs a name"),
        (["start", "Nope"], "There is no project named \"Nope\"."),
        (["stop", "Writing"], "is not running"),
        (["delete", "Nope"], "There is no project named \"Nope\"."),
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

@Suite("timetrack across processes", .serialized)
struct CrossProcessTests {
    // The latency is measured by Benchmarks/measure.py; here, that the change arrives (a loaded CI machine is slow).
    @Test func aWatcherSeesAChangeMadeByAnotherProcess() async throws {
        let database = TemporaryDatabase()
        let watcher = try TimetrackProcess(["watch", "--db", database.path])
        #expect(await eventually { watcher.output.contains("No projects yet") })
        #expect(try TimetrackProcess.run(["add", "Writing", "--db", database.path]).status == 0)
        #expect(await eventually { watcher.output.contains("Writing") })
        #expect(try TimetrackProcess.run(["start", "Writing", "--db", database.path]).status == 0)
        #expect(await eventually { watcher.output.contains("running since") })
    }

    @Test func aServerStreamsChangesFromOtherProcessesAndStopsCleanlyWithPagesOpen() async throws {
        let database = TemporaryDatabase()
        let (server, port) = try await TimetrackProcess.serve(["--db", database.path])
        let page = try EventStreamClient(port: port)
        #expect(page.next() != nil)
        #expect(try TimetrackProcess.run(["add", "<script>alert(1)</script>", "--db", database.path]).status == 0)
        #expect(page.next { $0.contains("alert(1)") } != nil)
        server.signal(SIGINT)
        let stopped = ContinuousClock.now
        #expect(server.waitForExit() == 0)
        #expect(ContinuousClock.now - stopped < .seconds(5))
    }

    // Issue 11: `serve` and `watch` went on with a database whose file was removed, silently.
    @Test func aServerWhoseDatabaseIsRemovedTellsThePagesAndStops() async throws {
        let database = TemporaryDatabase()
        let (server, port) = try await TimetrackProcess.serve(["--db", database.path])
        let page = try EventStreamClient(port: port)
        #expect(page.next { $0.contains("projects") } != nil)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        #expect(page.next(timeout: .seconds(30)) { $0.contains("was removed or replaced") } != nil)
        #expect(server.waitForExit() == 1)
        #expect(server.errors.contains("Error: The database \"\(database.path)\""))
        #expect(server.errors.contains("was removed or replaced"))
    }

    @Test func aWatcherWhoseDatabaseIsRemovedSaysSoAndStops() async throws {
        let database = TemporaryDatabase()
        let watcher = try TimetrackProcess(["watch", "--db", database.path])
        #expect(await eventually { watcher.output.contains("No projects yet") })
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        #expect(watcher.waitForExit() == 1)
        #expect(watcher.errors.contains("was removed or replaced"))
    }
}

/// The real clock of the process moved with Debian's `faketime` (libfaketime), as an NTP step or a laptop resuming
/// would move it: the tracker must never count the same time twice.
@Suite("timetrack with the clock going backwards", .serialized)
struct ClockTests {
    /// Runs `timetrack arguments…` with its clock moved by `offset` (faketime's syntax: "+1h", "-10m").
    private static func run(at offset: String, _ arguments: [String]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/faketime")
        process.arguments = ["-f", offset, TimetrackProcess.executable.path] + arguments
        // Only the wall clock moves: timers and timeouts keep the monotonic clock.
        process.environment = ProcessInfo.processInfo.environment.merging(["FAKETIME_DONT_FAKE_MONOTONIC": "1"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    // Issue 11: an activity of 1:00, then one started after the clock went back, which lay inside it: 2:10:00 for
    // 1:10:00 of time at most. Now the second starts where the first ended.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/faketime"), "needs Debian's faketime"))
    func anActivityStartedAfterTheClockWentBackDoesNotOverlapTheLastOne() throws {
        let database = TemporaryDatabase()
        let db = ["--db", database.path]
        #expect(try TimetrackProcess.run(["add", "Writing"] + db).status == 0)
        #expect(try Self.run(at: "+0", ["start", "Writing"] + db) == 0)
        #expect(try Self.run(at: "+1h", ["stop", "Writing"] + db) == 0)
        #expect(try Self.run(at: "+0", ["start", "Writing"] + db) == 0)  // an hour "before" the last stop
        #expect(try Self.run(at: "+70m", ["stop", "Writing"] + db) == 0)
        let listed = try TimetrackProcess.run(["list"] + db).output
        #expect(listed.contains("1:10:0"), "\(listed)")  // 1:10:00, give or take the seconds the commands took
    }
}
