import Foundation
import Testing
import TimeTrackerTestSupport

/// `timetrack` processes on one database follow each other's changes, and stop with a word when the database goes.
@Suite("timetrack across processes", .serialized)
struct CrossProcessTests {
    /// A `watch` shows a change made by another process. That it arrives is checked, with a generous deadline; how
    /// fast is measured by Benchmarks/measure.py.
    @Test func aWatcherSeesAChangeMadeByAnotherProcess() async throws {
        let database = TemporaryDatabase()
        let watcher = try TimetrackProcess(["watch", "--db", database.path])
        #expect(await eventually { watcher.output.contains("No projects yet") })
        #expect(try TimetrackProcess.run(["add", "Writing", "--db", database.path]).status == 0)
        #expect(await eventually { watcher.output.contains("Writing") })
        #expect(try TimetrackProcess.run(["start", "Writing", "--db", database.path]).status == 0)
        #expect(await eventually { watcher.output.contains("running since") })
    }

    /// A server streams to its page a change made by another process, and stops cleanly, at SIGINT, with the page
    /// still open.
    @Test func aServerStreamsChangesFromOtherProcessesAndStopsCleanlyWithPagesOpen() async throws {
        let database = TemporaryDatabase()
        let (server, port) = try await TimetrackProcess.serve(["--db", database.path])
        let page = try EventStreamClient(port: port)
        #expect(page.next() != nil)
        #expect(try TimetrackProcess.run(["add", "<script>alert(1)</script>", "--db", database.path]).status == 0)
        #expect(page.next { $0.contains("alert(1)") } != nil)
        server.signal(SIGINT)
        // The open page does not keep the server from stopping: its stream is ended, and the server exits cleanly.
        #expect(page.ends(), "the server did not end the open page's stream")
        #expect(server.waitForExit() == 0)
    }

    /// A server whose database file is removed tells its pages why, then stops with status 1 and the same message.
    @Test func aServerWhoseDatabaseIsRemovedTellsThePagesAndStops() async throws {
        let database = TemporaryDatabase()
        let (server, port) = try await TimetrackProcess.serve(["--db", database.path])
        let page = try EventStreamClient(port: port)
        #expect(page.next { $0.contains("projects") } != nil)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        #expect(page.next { $0.contains("was removed or replaced") } != nil)
        #expect(server.waitForExit() == 1)
        #expect(server.errors.contains("Error: The database \"\(database.path)\""))
        #expect(server.errors.contains("was removed or replaced"))
    }

    /// A `watch` whose database file is removed says so and stops with status 1.
    @Test func aWatcherWhoseDatabaseIsRemovedSaysSoAndStops() async throws {
        let database = TemporaryDatabase()
        let watcher = try TimetrackProcess(["watch", "--db", database.path])
        #expect(await eventually { watcher.output.contains("No projects yet") })
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        #expect(watcher.waitForExit() == 1)
        #expect(watcher.errors.contains("was removed or replaced"))
    }
}
