import Foundation
import GRDB
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// The SQLite database file: made owner-only and in WAL mode, marked as timetrack's, found where XDG says; a path or a
/// file it cannot use is refused with what to do, and left as it was.
@Suite("The SQLite database", .serialized)
struct SQLiteDatabaseTests {
    /// Runs a program to its end; its status and standard output.
    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try processSpawning.withLock { try process.run() }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    @Test func theFileIsOwnerOnlyInWALModeAndReopens() async throws {
        let database = TemporaryDatabase()
        do {
            let tracker = try TestClock().tracker(at: database.path)
            try await tracker.perform(.addProject(name: "Writing"))
        }
        let attributes = try FileManager.default.attributesOfItem(atPath: database.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(FileManager.default.fileExists(atPath: database.path + "-wal"))
        #expect(try TestClock().tracker(at: database.path).store.state.projects.map(\.name) == ["Writing"])
    }

    /// Every path timetrack cannot use as its database is refused with what is wrong, the path, and `--db` to choose
    /// another; an unrelated SQLite database is left exactly as it was (no timetrack tables, not switched to WAL).
    @Test func everyUnusablePathIsAnErrorThatSaysWhatToDo() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let file = database.directory.appendingPathComponent("file").path
        try Data("not a database, just text that is long enough to have a header".utf8).write(to: URL(fileURLWithPath: file))
        let otherApplication = database.directory.appendingPathComponent("other.sqlite").path
        try DatabaseQueue(path: otherApplication).write { try $0.execute(sql: "CREATE TABLE users (id INTEGER)") }
        let otherID = database.directory.appendingPathComponent("other-id.sqlite").path
        try DatabaseQueue(path: otherID).write { try $0.execute(sql: "PRAGMA application_id = 42") }
        let cases: [(path: String, problem: String)] = [
            ("", "the path is empty"),
            (database.directory.path, "it is a directory"),
            (file + "/sub/timetrack.sqlite", "its directory cannot be created (Not a directory)"),
            (file, "it is not an SQLite database"),
            (otherApplication, "tables timetrack did not make: users"),
            (otherID, "its application_id is 42"),
        ]
        for (path, problem) in cases {
            #expect {
                try TestClock().tracker(at: path)
            } throws: { error in
                let message = (error as? TrackerError)?.description ?? ""
                return message.contains(problem) && message.contains("\"\(path)\"") && message.contains("--db")
            }
        }
        // Refused, and left exactly as it was: no timetrack tables, not switched to WAL.
        let (tables, journal) = try DatabaseQueue(path: otherApplication).read { db in
            (try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'"),
             try String.fetchOne(db, sql: "PRAGMA journal_mode"))
        }
        #expect(tables == ["users"])
        #expect(journal == "delete")
    }

    @Test func aTimetrackDatabaseIsMarkedAsSuchAndOneFromBeforeIsAdopted() throws {
        let database = TemporaryDatabase()
        // Waits for locks: a tracker that just went away may still be closing its connections.
        var patient = Configuration()
        patient.busyMode = .timeout(30)
        _ = try TestClock().tracker(at: database.path)
        let applicationID = { try DatabaseQueue(path: database.path, configuration: patient).read { try Int32.fetchOne($0, sql: "PRAGMA application_id") } }
        #expect(try applicationID() == 0x7469_6D65)
        try DatabaseQueue(path: database.path, configuration: patient).write { try $0.execute(sql: "PRAGMA application_id = 0") }
        _ = try TestClock().tracker(at: database.path)  // made before application ids: adopted
        #expect(try applicationID() == 0x7469_6D65)
    }

    @Test func theDefaultPathFollowsXDG() {
        #expect(TimeTracker.defaultDatabasePath(environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/me"])
            == "/data/timetrack/timetrack.sqlite")
        // The specification says a relative XDG_DATA_HOME is invalid and must be ignored.
        #expect(TimeTracker.defaultDatabasePath(environment: ["XDG_DATA_HOME": "data", "HOME": "/home/me"])
            == "/home/me/.local/share/timetrack/timetrack.sqlite")
        #expect(TimeTracker.defaultDatabasePath(environment: ["HOME": "/home/me"])
            == "/home/me/.local/share/timetrack/timetrack.sqlite")
    }

    /// A database made when names were compared by lowercasing keeps both of two names that are one under Unicode case
    /// folding, and says so once, instead of merging them or refusing to open; deleting the older passes the name on to
    /// the other.
    @Test func namesThatCollideUnderTheNewComparisonAreKeptAndReported() async throws {
        let database = try Self.databaseWithCollidingNames()
        let tracker = try TestClock().tracker(at: database.path)
        #expect(tracker.store.state.projects.count == 3)
        #expect(tracker.notices.count == 1)
        #expect(tracker.notices.first?.contains(#""STRASSE" and "straße""#) == true)
        await #expect(throws: TrackerError.duplicateName(existing: "straße")) {
            try await tracker.perform(.addProject(name: "Strasse"))
        }
        // Deleting the older one passes the name on: the other is then the one that holds it.
        try await tracker.perform(.deleteProject(id: try tracker.project(named: "straße").id))
        let reopened = try TestClock().tracker(at: database.path)
        #expect(reopened.notices.isEmpty)
        #expect(reopened.store.state.projects.map(\.name) == ["STRASSE", "Writing"])
        await #expect(throws: TrackerError.duplicateName(existing: "STRASSE")) {
            try await reopened.perform(.addProject(name: "Straße"))
        }
    }

    /// Renaming the older of two colliding names passes its name on as a delete does: the other then holds it. Undo
    /// gives both their keys back, so the older has its name again and the collision is as it was.
    @Test func renamingOneOfTwoCollidingNamesPassesTheNameOnAndUndoGivesItBack() async throws {
        let database = try Self.databaseWithCollidingNames()
        let tracker = try TestClock().tracker(at: database.path)
        let older = try tracker.project(named: "straße").id
        try await tracker.perform(.renameProject(id: older, name: "Street"))
        let reopened = try TestClock().tracker(at: database.path)
        #expect(reopened.notices.isEmpty)
        #expect(reopened.store.state.projects.map(\.name) == ["STRASSE", "Street", "Writing"])
        await #expect(throws: TrackerError.duplicateName(existing: "STRASSE")) {
            try await reopened.perform(.renameProject(id: older, name: "Straße"))
        }
        try await reopened.perform(.undo)
        #expect(reopened.store.state.project(id: older)?.name == "straße")
        #expect(try TestClock().tracker(at: database.path).notices.count == 1)
        try await reopened.perform(.redo)
        #expect(try TestClock().tracker(at: database.path).notices.isEmpty)
    }

    /// While two names collide, neither project takes a name the other has ignoring case (two rows named `STRASSE`
    /// would be told apart by nothing); the newer renamed away and back is undone exactly, marked key and all.
    @Test func collidingProjectsTakeNoNameTheOtherHasAndTheirRenamesUndoExactly() async throws {
        let database = try Self.databaseWithCollidingNames()
        let tracker = try TestClock().tracker(at: database.path)
        let older = try tracker.project(named: "straße").id
        let newer = try #require(tracker.store.state.projects.first { $0.name == "STRASSE" }).id
        await #expect(throws: TrackerError.duplicateName(existing: "STRASSE")) {
            try await tracker.perform(.renameProject(id: older, name: "STRASSE"))
        }
        await #expect(throws: TrackerError.duplicateName(existing: "straße")) {
            try await tracker.perform(.renameProject(id: newer, name: "Strasse"))
        }
        try await tracker.perform(.renameProject(id: newer, name: "Street"))
        #expect(try TestClock().tracker(at: database.path).notices.isEmpty)
        try await tracker.perform(.undo)
        #expect(tracker.store.state.project(id: newer)?.name == "STRASSE")
        #expect(try TestClock().tracker(at: database.path).notices.count == 1)
    }

    /// A database of the first schema, whose keys were lowercased: `straße` and `STRASSE` were two names then.
    private static func databaseWithCollidingNames() throws -> TemporaryDatabase {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        try DatabaseQueue(path: database.path).write { db in
            // The first schema, as its migration made it, with keys lowercased.
            try db.execute(sql: """
                CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
                INSERT INTO grdb_migrations VALUES ('projects and activities');
                CREATE TABLE project (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL,
                                      nameKey TEXT NOT NULL UNIQUE, created DOUBLE NOT NULL);
                CREATE TABLE activity (id INTEGER PRIMARY KEY AUTOINCREMENT,
                                       projectId INTEGER NOT NULL REFERENCES project(id) ON DELETE CASCADE,
                                       startedAt DOUBLE NOT NULL, stoppedAt DOUBLE,
                                       CHECK (stoppedAt IS NULL OR stoppedAt >= startedAt));
                INSERT INTO project (name, nameKey, created) VALUES ('straße', 'straße', 0), ('STRASSE', 'strasse', 0),
                                                                    ('Writing', 'writing', 0);
                """)
        }
        return database
    }

    /// A symbolic link to a timetrack database (one kept elsewhere and linked in: dotfiles, a synced folder) opens.
    @Test func aSymbolicLinkToATimetrackDatabaseOpens() throws {
        let database = TemporaryDatabase()
        do {
            let tracker = try TestClock().tracker(at: database.path)
            _ = tracker
        }
        let link = database.directory.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: database.path)
        #expect(throws: Never.self) { _ = try TestClock().tracker(at: link) }
    }

    /// A table whose name merely starts like SQLite's own (`SQLiteStudioNotes`) is another application's: the database
    /// is refused and left as it was, not given timetrack's tables and switched to WAL.
    @Test func aTableWhoseNameStartsLikeSQLitesOwnIsAnotherApplications() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let made = try Self.run("/usr/bin/sqlite3", [database.path, "CREATE TABLE SQLiteStudioNotes (note TEXT); INSERT INTO SQLiteStudioNotes VALUES ('keep')"])
        try #require(made.status == 0)
        #expect(throws: TrackerError.self) { _ = try TestClock().tracker(at: database.path) }
        let mode = try Self.run("/usr/bin/sqlite3", [database.path, "PRAGMA journal_mode"])
        #expect(mode.output.trimmingCharacters(in: .whitespacesAndNewlines) == "delete")
    }
}
