import Foundation
import GRDB
import Statehouse
import StatehouseTestSupport
import Testing
@testable import StatehouseSQLite

/// Attacks on issue 14's push for SQLite: a monitor released while a change is being delivered, and a database
/// that is not in WAL mode. Serialized: the tests block the watch's queue and write to real databases.
@Suite("Attack: watching SQLite", .serialized)
struct AttackDatabaseWatchTests {
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
        let writer = try DatabaseQueue(path: database.path)
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
}
