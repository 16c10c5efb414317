import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// What only the PostgreSQL backend has: a schema it must not force on another application's database, a trigger
/// that announces any writer's commit, and a listener that comes back after its connection is lost.
@Suite(
    "The PostgreSQL backend", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct PostgresBackendTests {
    @Test func aChangeMadeWithoutTimetrackReachesTheTracker() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await database.tracker()
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES ('From psql', 'from psql', 0)")
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["From psql"] })
    }

    @Test func theListenerComesBackAfterItsConnectionIsTerminatedAndCatchesUp() async throws {
        let database = try TemporaryPostgresDatabase()
        let viewer = try await database.tracker()
        // Every client connection of the database but psql's own: the listener's, and the pooled ones (as the
        // cluster's own terminateConnections does, only client backends: not a server process of its own).
        let terminated = try database.sql("""
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """)
        #expect(Int(terminated) ?? 0 >= 1)
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES ('While away', 'while away', 0)")
        #expect(await eventually { viewer.store.state.projects.map(\.name) == ["While away"] })
        let writer = try await database.tracker()
        try await writer.perform(.addProject(name: "After"))
        #expect(await eventually { viewer.store.state.projects.map(\.name) == ["After", "While away"] })
        // The viewer's own pooled connections were terminated too: its writes go through new ones.
        try await viewer.perform(.addProject(name: "Again"))
    }

    /// A `COMMIT` that outlasts the statement timeout (a deferred trigger sleeps in it) still lands: the action is
    /// looked up and reported done, not failed (its user would do it again: a second project, a second start).
    @Test func aCommitWhoseAnswerCameTooLateIsLookedUpNotReportedFailed() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await TimeTracker.open(postgres: database.url, statementTimeout: .seconds(1))
        try database.sql("""
            CREATE FUNCTION slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_sleep(1.5); RETURN NULL; END $$;
            CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON project
            DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION slow_commit();
            """)
        try await tracker.perform(.addProject(name: "Slow"))
        #expect(try database.count("project") == 1)
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Slow"] })
    }

    @Test func aDatabaseWithAnotherApplicationsTablesIsLeftAlone() async throws {
        let database = try TemporaryPostgresDatabase()
        try database.sql("CREATE TABLE project (id INT, title TEXT); INSERT INTO project VALUES (1, 'keep')")
        await #expect {
            _ = try await database.tracker()
        } throws: { error in
            guard case .unusableDatabase(_, let problem, _) = error as? TrackerError else { return false }
            return problem.contains("project")
        }
        #expect(try database.sql("SELECT title FROM project") == "keep")
        #expect(try database.count("pg_tables WHERE tablename = 'activity'") == 0)
    }

    @Test func twoTrackersOpeningAnEmptyDatabaseAtOnceMakeTheSchemaOnce() async throws {
        let database = try TemporaryPostgresDatabase()
        let trackers = try await withThrowingTaskGroup(of: TimeTracker.self) { group in
            for _ in 0..<4 { group.addTask { try await database.tracker() } }
            return try await group.reduce(into: [TimeTracker]()) { $0.append($1) }
        }
        try await trackers[0].perform(.addProject(name: "Writing"))
        for tracker in trackers {
            #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Writing"] })
        }
        #expect(try database.count("timetrack_migrations") == 1)
    }

    @Test func projectsAreOrderedAsOnSQLiteWhateverTheDatabasesLocale() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await database.tracker()
        for name in ["b", "B2", "a", "Ä", "_x", "Z"] { try await tracker.perform(.addProject(name: name)) }
        let sqlite = TemporaryDatabase()
        let reference = try await sqlite.tracker()
        for name in ["b", "B2", "a", "Ä", "_x", "Z"] { try await reference.perform(.addProject(name: name)) }
        #expect(tracker.store.state.projects.map(\.name) == reference.store.state.projects.map(\.name))
    }

    @Test func aWriteThatCannotGetTheLockInTimeIsRefusedAndWritesNothing() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await database.tracker(clock: TestClock(), lockTimeout: .milliseconds(200))
        // Another writer's transaction holding the write lock ("time" in ASCII) for a while.
        let holder = Task.detached {
            try database.sql("BEGIN; SELECT pg_advisory_xact_lock(1953066341); SELECT pg_sleep(5); COMMIT")
        }
        let held = await eventually {
            (try? database.sql("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())")) == "1"
        }
        #expect(held)
        await #expect(throws: TrackerError.databaseLocked(waited: .milliseconds(200))) {
            try await tracker.perform(.addProject(name: "Writing"))
        }
        #expect(try database.count("project") == 0)
        _ = try await holder.value
        try await tracker.perform(.addProject(name: "Writing"))
    }
}
