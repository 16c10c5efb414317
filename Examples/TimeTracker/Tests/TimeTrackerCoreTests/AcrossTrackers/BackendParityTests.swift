#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// SQLite and PostgreSQL give the same answers and the same states for the same actions.
@Suite(
    "The same answers on SQLite and PostgreSQL", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct BackendParityTests {
    /// The same actions, on SQLite and on PostgreSQL, give the same answers and the same states, step by step:
    /// names that are one under Unicode's case folding, bad names, unknown ids, starts, stops, deletes, restores,
    /// the trash emptied after an hour, a clock set back.
    @Test func theSameActionsGiveTheSameAnswersOnBothBackends() async throws {
        let postgres = try TemporaryPostgresDatabase()
        let sqlite = TemporaryDatabase()
        let postgresClock = TestClock(), sqliteClock = TestClock()
        let onPostgres = try await postgres.tracker(clock: postgresClock)
        let onSQLite = try await sqlite.tracker(clock: sqliteClock)
        let names = [
            "Writing", "WRITING", " writing ", "straße", "STRASSE", "ΟΔΟΣ", "οδος", "ﬁle", "FILE", "été", "E\u{301}TE\u{301}",
            "'; DROP TABLE project; --", "Robert'); DELETE FROM activity;--", "$1", "?", "\\", "%", "_", "😀\u{200D}😀",
            "😀😀", "a\u{0}b", "\u{200B}", "", "x" + String(repeating: "é", count: 199), String(repeating: "€", count: 134),
        ]
        var random = SeededRandom(seed: 15)
        for step in 0..<400 {
            let id = Int64(random.next(upTo: 12)) + 1
            let action: TrackerAction = switch random.next(upTo: 10) {
            case 0, 1: .addProject(name: names[random.next(upTo: names.count)])
            case 2, 3: .startActivity(projectID: id)
            case 4, 5: .stopActivity(projectID: id)
            case 6: .deleteProject(id: id)
            case 7: .restoreProject(id: id)
            default: .addProject(name: "Project \(random.next(upTo: 8))")
            }
            let seconds = [0.5, 7, 60, 1_800, -120][random.next(upTo: 5)]
            postgresClock.advance(by: seconds)
            sqliteClock.advance(by: seconds)
            let expected = await outcome(of: action, on: onSQLite)
            let got = await outcome(of: action, on: onPostgres)
            #expect(got == expected, "step \(step): \(action)")
            #expect(onPostgres.store.state == onSQLite.store.state, "step \(step): \(action)")
            if got != expected || onPostgres.store.state != onSQLite.store.state { return }
        }
        #expect(try postgres.count("activity") == (try sqlite.count("activity")))
        #expect(try postgres.count("deletedProject") == (try sqlite.count("deletedProject")))
    }

    /// Projects are listed in the same order as on SQLite, whatever collation the database's locale would give.
    @Test func projectsAreOrderedAsOnSQLiteWhateverTheDatabasesLocale() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await database.tracker()
        for name in ["b", "B2", "a", "Ä", "_x", "Z"] { try await tracker.perform(.addProject(name: name)) }
        let sqlite = TemporaryDatabase()
        let reference = try await sqlite.tracker()
        for name in ["b", "B2", "a", "Ä", "_x", "Z"] { try await reference.perform(.addProject(name: name)) }
        #expect(tracker.store.state.projects.map(\.name) == reference.store.state.projects.map(\.name))
    }
}
#endif
