import Foundation
import GRDB
import Testing
import TimeTrackerTestSupport

/// Options and databases `timetrack` cannot use, given as a clumsy user would: refused with a message about what was
/// given, never a crash, and another application's database is left as it was.
@Suite("timetrack refusing what it cannot use", .serialized)
struct CLIValidationTests {
    /// A huge `--lock-timeout` ("wait as long as it takes": `1e30`) is not a crash (a `Duration` overflow).
    @Test func aHugeLockTimeoutIsNotACrash() throws {
        let database = TemporaryDatabase()
        let result = try TimetrackProcess.run(["list", "--lock-timeout", "1e30", "--db", database.path])
        #expect(result.status != 132)
        #expect(!result.errors.contains("Fatal error"))
    }

    /// A huge `--idle-timeout` ("never close idle connections": `1e10`) is not a crash (its nanoseconds overflow
    /// `Int64`).
    @Test func aHugeIdleTimeoutIsNotACrash() async throws {
        let database = TemporaryDatabase()
        let server = try TimetrackProcess(["serve", "--port", "0", "--idle-timeout", "1e10", "--db", database.path])
        _ = await eventually {
            server.output.contains("timetrack is serving") || server.errors.contains("Error") || server.errors.contains("Fatal error")
        }
        #expect(!server.errors.contains("Fatal error"))
        server.signal(SIGINT)
        _ = server.waitForExit()
    }

    /// Another application's database whose only table is called `project` (a name among timetrack's) is refused as
    /// another application's, and left untouched: no application id, no WAL, no migrations table.
    @Test func anotherApplicationsDatabaseWithATableNamedProjectIsLeftUntouched() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        try DatabaseQueue(path: database.path).write { db in
            try db.execute(sql: "CREATE TABLE project (title TEXT, budget INTEGER)")
        }
        let result = try TimetrackProcess.run(["list", "--db", database.path])
        #expect(result.status == 1)
        #expect(result.errors.contains("another application"), "\(result.errors)")
        var readOnly = Configuration()
        readOnly.readonly = true
        let (applicationID, journal, tables) = try DatabaseQueue(path: database.path, configuration: readOnly).read { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA application_id") ?? -1,
                try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            )
        }
        #expect(applicationID == 0)
        #expect(journal == "delete")
        #expect(tables == ["project"])
    }

    /// A `--db` path ending in a slash (meant as a directory) gets a message about the path, not one about a database
    /// removed or replaced.
    @Test func aPathEndingInASlashGetsAMessageAboutThePath() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let path = database.directory.appendingPathComponent("tracking").path + "/"
        let result = try TimetrackProcess.run(["list", "--db", path])
        #expect(result.status == 1)
        #expect(!result.errors.contains("removed or replaced"), "\(result.errors)")
    }
}
