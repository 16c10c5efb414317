import Foundation
import GRDB
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// How long a write waits for another program's lock on the SQLite database: the lock timeout, counted from when the
/// action was performed; past it, `databaseLocked`, nothing written.
@Suite("Waiting for another program's lock on SQLite", .serialized)
struct SQLiteLockTimeoutTests {
    /// While another program holds the write lock, a write waits the lock timeout and is refused as `databaseLocked`,
    /// saying how long it waited and no SQL, and writes nothing; once the lock is gone, the write lands.
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

    /// Opening waits, as a write does, for a program that holds the whole database for a moment (SQLite does this
    /// while the last connection of another tracker closes and checkpoints), instead of failing at once with
    /// "database is locked".
    @Test func openingWaitsForAProgramThatHoldsTheDatabaseForAMoment() async throws {
        let database = TemporaryDatabase()
        _ = try TestClock().tracker(at: database.path)
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true  // the point: a transaction left open across accesses
        configuration.busyMode = .timeout(60)  // the tracker above may still be closing its connections
        let holder = try DatabaseQueue(path: database.path, configuration: configuration)
        // In WAL mode only a connection in exclusive locking mode keeps readers out.
        try await holder.writeWithoutTransaction { try $0.execute(sql: "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE") }
        // Released from a dispatch queue, not a task: opening blocks this thread while it waits, and the cooperative
        // pool may have no other thread to run a task on (two on a two-core machine).
        DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(300)) {  // how long the other program holds it
            try? holder.close()
        }
        let tracker = try TestClock().tracker(at: database.path, lockTimeout: .seconds(60))
        try await tracker.perform(.addProject(name: "Writing"))
        #expect(try database.count("project") == 1)
    }

    /// A lock timeout of 0 means "never wait", not "never write": a database nobody holds is written to.
    @Test func aLockTimeoutOfZeroStillWritesToADatabaseNobodyHolds() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path, lockTimeout: .zero)
        await #expect(throws: Never.self) { try await tracker.perform(.addProject(name: "Writing")) }
    }
}
