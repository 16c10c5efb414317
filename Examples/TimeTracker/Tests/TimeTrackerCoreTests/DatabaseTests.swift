import Foundation
import GRDB
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

@Suite("The database", .serialized)
struct DatabaseTests {
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

    // Issue 11: these said `NSCocoaErrorDomain Code=512 "(null)"`, or worse, nothing: an unrelated SQLite database
    // was given timetrack's tables and switched to WAL.
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
        // Waits for locks: a tracker that just went away may still be closing its connections (a CI run read
        // "database is locked" without it).
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
}

@Suite("Live across trackers", .serialized)
struct LiveTests {
    // How fast is measured by Benchmarks/measure.py; a timed assertion here would fail on a loaded machine, so these
    // tests check that the change arrives, with a generous deadline.
    @Test(arguments: TestBackend.allCases)
    func aChangeMadeThroughAnotherTrackerReachesThisOnesSubscribers(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let viewer: TimeTracker
        if let file = database as? TemporaryDatabase {
            // A safety net longer than the deadline: only the watch of the database's files can deliver.
            viewer = try clock.tracker(at: file.path, safetyNet: .seconds(3600))
        } else {
            viewer = try await database.tracker(clock: clock)
        }
        let writer = try await database.tracker(clock: clock)  // its own connections, as another process has
        let renders = Renders()
        let subscription = viewer.store.subscribe(\.projects) { renders.append($0.map(\.name)) }
        try await writer.perform(.addProject(name: "Writing"))
        #expect(await eventually { renders.last == ["Writing"] })
        #expect(renders.all == [[], ["Writing"]])  // rendered now, then once per change
        subscription.cancel()
    }

    // Two servers racing end as on SQLite: one wins, every other gets the error a lone second try gets.
    @Test(arguments: TestBackend.allCases)
    func twoTrackersAddingTheSameNameAtOnceMakeOneProject(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        var trackers: [TimeTracker] = []
        for _ in 0..<4 { trackers.append(try await database.tracker()) }
        let results = await withTaskGroup(of: Result<ProjectSummary?, TrackerError>.self) { group in
            for (index, tracker) in trackers.enumerated() {
                let name = index.isMultiple(of: 2) ? "Same" : "SAME"
                group.addTask {
                    do throws(TrackerError) {
                        return .success(try await tracker.perform(.addProject(name: name)))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        let winner = try #require(try results.first { (try? $0.get()) != nil }?.get())
        #expect(results.filter { (try? $0.get()) != nil }.count == 1)
        for case .failure(let error) in results {
            #expect(error == .duplicateName(existing: winner.name))
        }
        #expect(try database.count("project") == 1)
    }

    @Test(arguments: TestBackend.allCases)
    func concurrentStartsOfOneProjectStartItOnce(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        var trackers: [TimeTracker] = []
        for _ in 0..<4 { trackers.append(try await database.tracker()) }
        let id = try #require(try await trackers[0].perform(.addProject(name: "Writing"))).id
        let failures = await withTaskGroup(of: TrackerError?.self) { group in
            for tracker in trackers {
                for _ in 0..<10 {
                    group.addTask {
                        do throws(TrackerError) {
                            try await tracker.perform(.startActivity(projectID: id))
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
            }
            return await group.reduce(into: [TrackerError?]()) { $0.append($1) }
        }
        #expect(failures.filter { $0 == nil }.count == 1)
        #expect(failures.compactMap { $0 }.allSatisfy { $0 == .alreadyRunning(project: "Writing") })
        #expect(try database.count("activity") == 1)
    }
}

/// What a subscriber rendered, from any thread.
final class Renders: Sendable {
    private let renders = StateContainer<[[String]]>([], key: "renders.\(UUID().uuidString)")
    var all: [[String]] { renders.value }
    var last: [String]? { renders.value.last }
    func append(_ names: [String]) { renders.update { $0.append(names) } }

    // Issue 11: names are now compared by Unicode case folding; a database made before keeps both of two names that
    // collide under the new comparison, and says so, instead of merging or refusing to open.
    @Test func namesThatCollideUnderTheNewComparisonAreKeptAndReported() async throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        try await DatabaseQueue(path: database.path).write { db in
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

    // Issue 11: while another program held the write lock, writes waited 10 s each, one after the other, and then
    // failed with SQL text in the message.
    @Test func aWriteThatCannotGetTheLockInTimeIsRefusedAndWritesNothing() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path, lockTimeout: .milliseconds(300))
        let holder = try await DatabaseLockHolder(path: database.path)
        await #expect(throws: TrackerError.databaseLocked(waited: .milliseconds(300))) {
            try await tracker.perform(.addProject(name: "Writing"))
        }
        #expect(TrackerError.databaseLocked(waited: .milliseconds(300)).description.contains("waited 0.3 s"))
        #expect(TrackerError.databaseLocked(waited: .seconds(5)).description.contains("waited 5 s"))
        try await holder.release()
        // A tracker of its own, with time to spare: 300 ms from `perform` can pass before the write starts on a
        // loaded machine.
        try await TestClock().tracker(at: database.path, lockTimeout: .seconds(60)).perform(.addProject(name: "Writing"))
        #expect(try database.count("project") == 1)
    }

    // Issue 11: after `rm` of the files, the server went on confirming writes into the unlinked file, and `watch`
    // showed them; once the server stopped, they were gone. Nothing was said.
    @Test(arguments: [false, true])
    func aDatabaseRemovedOrReplacedGetsNoMoreWritesAndTheStateSaysWhy(replaced: Bool) async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        try await tracker.perform(.addProject(name: "Before"))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        if replaced {
            // A restore: another database moved into place.
            let restored = database.directory.appendingPathComponent("restored.sqlite").path
            try await DatabaseQueue(path: restored).write { try $0.execute(sql: "CREATE TABLE project (name TEXT)") }
            try FileManager.default.moveItem(atPath: restored, toPath: database.path)
        }
        await #expect(throws: TrackerError.databaseGone(path: database.path)) {
            try await tracker.perform(.addProject(name: "After"))
        }
        #expect(await eventually(timeout: .seconds(30)) { tracker.store.state.problem != nil })
        #expect(tracker.store.state.problem?.contains("was removed or replaced") == true)
        if replaced { #expect(try database.count("project") == 0) }  // the file now there got nothing
    }
}
