#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// A PostgreSQL database timetrack opens: its schema is made once, whoever comes first, and never forced on another
/// application's tables; a database that cannot hold every name is refused; names travel as UTF-8, and ids another
/// program took are skipped, as on SQLite.
@Suite(
    "A PostgreSQL database", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct PostgresDatabaseTests {
    /// A database that holds another application's table named like one of timetrack's is refused, and left as it was.
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

    /// Four trackers opening an empty database at once make the schema once, and all of them work on it.
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
        // Each migration once.
        #expect(try database.count("timetrack_migrations") == 5)
    }

    /// A database whose encoding cannot hold every name a user may give (LATIN1 holds no emoji, no Greek) would
    /// refuse, with a server error, names SQLite takes: it is refused when opened, with what to do.
    @Test func aDatabaseThatCannotHoldEveryNameIsRefusedWhenOpened() async throws {
        let database = try TemporaryPostgresDatabase()
        let latin1 = database.name + "_latin1"
        try database.sql("CREATE DATABASE \(latin1) ENCODING 'LATIN1' TEMPLATE template0")
        defer { _ = try? database.sql("DROP DATABASE \(latin1) WITH (FORCE)") }
        let url = database.url(ofDatabase: latin1)
        await #expect {
            let tracker = try await TimeTracker.open(postgres: url)
            // Accepted: then it must hold what SQLite holds.
            try await tracker.perform(.addProject(name: "😀 Ωμέγα"))
        } throws: { error in
            guard case .unusableDatabase(_, let problem, let fix) = error as? TrackerError else { return false }
            return problem.contains("LATIN1") && fix.contains("UTF8")
        }
        #expect(try database.sql("SELECT count(*) FROM pg_tables WHERE tablename = 'project'", inDatabase: latin1) == "0")
    }

    /// Rows another program inserted with ids of their own (projects and activities moved over from a SQLite
    /// database, say) take ids the tracker's own inserts would be given next. On SQLite the next id is past every
    /// id in the table; the same actions must work on PostgreSQL, not be refused as a duplicate name no project has.
    @Test func idsTakenByAnotherProgramAreSkippedAsOnSQLite() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await database.tracker()
        try database.sql("""
            INSERT INTO project (id, name, nameKey, created) VALUES (1, 'Imported', 'imported', 0), (2, 'Old', 'old', 0);
            INSERT INTO activity (id, projectId, startedAt, stoppedAt) VALUES (1, 1, 0, 60), (2, 1, 100, 160);
            """)
        let added = try await tracker.perform(.addProject(name: "Writing"))
        #expect(added?.name == "Writing")
        let id = try #require(added?.id)
        try await tracker.perform(.startActivity(projectID: id))
        try await tracker.perform(.startActivity(projectID: 2))
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Imported", "Old", "Writing"] })
    }

    /// A database (or its server, or the user) may suggest a client encoding other than UTF8: timetrack must still
    /// write names as they are (not as Latin-1 read from their UTF-8 bytes, which every other program would see
    /// garbled), and read what others wrote (a name that has no Latin-1 form would make every snapshot fail).
    @Test func namesAreReadAndWrittenAsUTF8WhateverClientEncodingTheDatabaseSuggests() async throws {
        let database = try TemporaryPostgresDatabase()
        try database.sql("ALTER DATABASE \(database.name) SET client_encoding = 'LATIN1'")
        let tracker = try await database.tracker()
        try await tracker.perform(.addProject(name: "été"))
        #expect(try database.sql("SELECT name = U&'\\00E9t\\00E9' FROM project") == "t")
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES (U&'\\03A9mega', U&'\\03C9mega', 0)")
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["été", "Ωmega"] })
    }
}
#endif
