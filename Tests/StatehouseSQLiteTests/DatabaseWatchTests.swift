import Foundation
import GRDB
import Statehouse
import StatehouseTestSupport
import Testing
@testable import StatehouseSQLite

/// A writer that waits for the lock, as every writer of a rollback-journal database must: the watch's check reads
/// the database, and a reader there holds off a commit for that moment.
private var patientWriter: Configuration {
    var configuration = Configuration()
    configuration.busyMode = .timeout(10)
    return configuration
}

/// The watch that tells monitors of a database's commits: a monitor released while a change is being delivered (or
/// from its own call) is never called again, a database that is not in WAL mode is watched too, and a database file
/// replaced at its path is followed there. Serialized: the tests block the watch's queue and write to real databases.
@Suite("Database watch: released monitors, rollback journals, replaced files", .serialized)
struct DatabaseWatchTests {
    /// Monitors share one watch, which calls them one after another: one of them is held inside its call while the
    /// others are released. Released, they must never be called again (a monitor stops when released, as a
    /// subscription token does when cancelled).
    @Test func aMonitorReleasedWhileAChangeIsBeingDeliveredIsNeverCalledAfterwards() async throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        for round in 0..<5 {
            let held = Locked(false)
            let resume = DispatchSemaphore(value: 0)
            let holder = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) {
                guard !held.withLock({ held in defer { held = true }; return held }) else { return }
                resume.wait()
            }
            let released = Locked(false)
            let lateCalls = Recorder<Int>()
            var others = try (0..<10).map { index in
                try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) {
                    if released.withLock({ $0 }) { lateCalls.append(index) }
                }
            }
            try storage.save(Data("\(round)".utf8), key: "k")
            #expect(await eventually { held.withLock { $0 } })
            others.removeAll()
            released.withLock { $0 = true }
            resume.signal()
            // The held call has returned once a later commit is reported to the holder's queue again.
            let check = Recorder<Int>()
            let probe = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) { check.append(1) }
            try storage.save(Data("probe \(round)".utf8), key: "k")
            #expect(await eventually { check.count > 0 })
            #expect(lateCalls.elements.isEmpty, "round \(round): released monitors \(lateCalls.elements) were called")
            withExtendedLifetime((holder, probe)) {}
        }
    }

    @Test func aMonitorThatReleasesItselfFromItsOwnCallDoesNotWaitForItself() async throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let slot = Locked<DatabaseChangeMonitor?>(nil)
        let calls = Recorder<Int>()
        slot.withLock {
            $0 = try? DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) {
                calls.append(1)
                let monitor = slot.withLock { slot in defer { slot = nil }; return slot }
                withExtendedLifetime(monitor) {}
            }
        }
        try storage.save(Data("1".utf8), key: "k")
        #expect(await eventually { calls.count == 1 && slot.withLock { $0 == nil } })
        // The watch's queue goes on: another monitor is told of the next commit.
        let after = Recorder<Int>()
        let monitor = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) { after.append(1) }
        try storage.save(Data("2".utf8), key: "k")
        #expect(await eventually { after.count > 0 })
        #expect(calls.count == 1)
        withExtendedLifetime(monitor) {}
    }

    @Test func aCommitToARollbackJournalDatabaseReachesTheMonitorWithoutAPoll() async throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let writer = try DatabaseQueue(path: database.path, configuration: patientWriter)
        try await writer.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        let mode = try await writer.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") }
        #expect(mode == "delete")
        let calls = Recorder<Int>()
        let monitor = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) { calls.append(1) }
        for value in 1...3 {
            let before = calls.count
            try await writer.write { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value]) }
            #expect(await eventually { calls.count > before })
        }
        withExtendedLifetime(monitor) {}
    }

    /// A database replaced by another file (a restore, say): the monitor is told, and then follows the database the
    /// path names now, not the file it first opened. (Rollback-journal databases: a WAL database must not be
    /// replaced while a connection has it open, or its `-wal` would be read as the new file's.)
    @Test func afterTheDatabaseFileIsReplacedTheMonitorFollowsTheNewFile() async throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let original = try DatabaseQueue(path: database.path, configuration: patientWriter)
        try await original.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        let calls = Recorder<Int>()
        let monitor = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) { calls.append(1) }
        let replacementPath = database.directory.appendingPathComponent("replacement.sqlite").path
        let replacement = try DatabaseQueue(path: replacementPath, configuration: patientWriter)
        try await replacement.write { db in try db.execute(sql: "CREATE TABLE t (v INTEGER)") }
        #expect(rename(replacementPath, database.path) == 0)
        #expect(await eventually { calls.count >= 1 })
        // SQLite refuses writes through a connection whose file was renamed: write as the next opener would.
        let current = try DatabaseQueue(path: database.path, configuration: patientWriter)
        for value in 1...3 {
            let before = calls.count
            try await current.write { db in try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: [value]) }
            #expect(await eventually { calls.count > before }, "commit \(value) to the file the path names now")
        }
        withExtendedLifetime((monitor, original, replacement)) {}
    }
}
