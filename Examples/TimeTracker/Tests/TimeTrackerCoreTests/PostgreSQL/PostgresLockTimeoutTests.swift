#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// How long a write waits for another writer on PostgreSQL: the lock timeout, counted from when the action was
/// performed, however it compares with the statement timeout; past it, `databaseLocked`, nothing written. A write whose
/// statement timed out ends its transaction, and holds the lock no longer.
@Suite(
    "Waiting for another writer on PostgreSQL", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct PostgresLockTimeoutTests {
    /// While another writer holds the write lock, a write waits the lock timeout and is refused as `databaseLocked`,
    /// and writes nothing; once the lock is free, the same tracker's write lands.
    ///
    /// The other writer holds the lock until the test lets it go, and the write is performed only once the server
    /// shows the lock held: a holder that held for a fixed time (on a thread of the cooperative pool, beside the
    /// test's own check) could be gone before a busy machine ran the check, and the write would go through.
    @Test func aWriteThatCannotGetTheLockInTimeIsRefusedAndWritesNothing() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await database.tracker(clock: TestClock(), lockTimeout: .milliseconds(200))
        let holder = try PostgresWriteLockHolder(on: database)
        try #require(await holder.waitUntilHeld(), "the other writer never held the write lock")
        await #expect(throws: TrackerError.databaseLocked(waited: .milliseconds(200))) {
            try await tracker.perform(.addProject(name: "Writing"))
        }
        #expect(try database.count("project") == 0)
        try await holder.release()
        try await tracker.perform(.addProject(name: "Writing"))
    }

    /// The lock timeout is how long an action waits for another writer, on PostgreSQL as on SQLite, even when it
    /// is longer than the statement timeout (`--lock-timeout 60`, the statement timeout 30 s): within it the action
    /// waits and lands; past it, it is refused as `databaseLocked` (503), not as a server that does not answer
    /// (500, "is the server up and reachable?").
    @Test func anActionWaitsForAnotherWriterAsLongAsTheLockTimeoutSays() async throws {
        let database = try TemporaryPostgresDatabase()
        // Four times the statement timeout, and time enough for a busy machine to see the action wait and let the
        // other writer go.
        let tracker = try await TimeTracker.open(
            postgres: database.url, lockTimeout: .seconds(20), statementTimeout: .seconds(5)
        )
        let waitingForTheLock = """
            SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
            AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
            """
        // Another writer holds the write lock until the test lets it go.
        let first = try PostgresWriteLockHolder(on: database)
        #expect(await first.waitUntilHeld())
        let waiting = Task { try await tracker.perform(.addProject(name: "Waited")) }
        // The action waits for the lock: let the holder go, well within the lock timeout.
        #expect(await eventually(every: psqlPolling) { (try? database.sql(waitingForTheLock)) == "1" })
        try await first.release()
        _ = try await waiting.value

        let second = try PostgresWriteLockHolder(on: database)
        #expect(await second.waitUntilHeld())
        await #expect(throws: TrackerError.databaseLocked(waited: .seconds(20))) {
            try await tracker.perform(.addProject(name: "Refused"))
        }
        try await second.release()
        #expect(try database.sql("SELECT string_agg(name, ',') FROM project") == "Waited")
    }

    /// A statement that outlasts the statement timeout (here: an insert a trigger slows down, as a server under
    /// load or a network that stalls would) fails the action. Its transaction must end with it: not stay open on a
    /// connection the pool hands to the next action, where the failed action's insert would be committed with the
    /// next one's, and the write lock it holds would keep every other tracker, even one opening, out.
    @Test func anActionWhoseStatementTimedOutNeverLandsAndHoldsNoLock() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await TimeTracker.open(
            postgres: database.url, lockTimeout: .seconds(1), statementTimeout: .seconds(3)
        )
        try database.sql("""
            CREATE FUNCTION slow_insert() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.name = 'Timed out' THEN PERFORM pg_sleep(8); END IF; RETURN NEW; END $$;
            CREATE TRIGGER slow_insert BEFORE INSERT ON project FOR EACH ROW EXECUTE FUNCTION slow_insert();
            """)
        await #expect(throws: TrackerError.self) { try await tracker.perform(.addProject(name: "Timed out")) }
        // The slow insert ends on the server.
        #expect(await eventually(every: psqlPolling) {
            (try? database.sql("""
                SELECT count(*) FROM pg_stat_activity
                WHERE datname = current_database() AND state = 'active' AND query LIKE 'INSERT INTO project%'
                """)) == "0"
        })

        // Another tracker (another server) writes within its usual lock timeout.
        let other = try await database.tracker()
        try await other.perform(.addProject(name: "Other"))
        // And this tracker's next action carries nothing of the failed one. (Its statements have 3 s each: on a
        // loaded machine one may time out too, and is then tried again; none may land unreported.)
        var next: ProjectSummary?
        for _ in 0..<5 where next == nil {
            do throws(TrackerError) {
                next = try await tracker.perform(.addProject(name: "Next"))
            } catch .duplicateName {
                Issue.record("an attempt reported failed had landed")
                break
            } catch {
                continue
            }
        }
        #expect(next?.name == "Next")
        #expect(try database.sql("SELECT string_agg(name, ',' ORDER BY name) FROM project") == "Next,Other")
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Next", "Other"] })
    }
}
#endif
