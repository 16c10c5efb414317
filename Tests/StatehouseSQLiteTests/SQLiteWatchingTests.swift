import Foundation
import Statehouse
import StatehouseTestSupport
import Testing
@testable import StatehouseSQLite

/// A safety net longer than any deadline here (`eventually` waits up to a minute): only a notification can pass.
private let onlyPush = ExternalChanges.watch(safetyNet: .seconds(3600))

/// A container of `key` in `database` that follows only by notification, and what its listener saw.
private func followed(_ key: String, in database: TemporaryDatabase) throws -> (StateContainer<Int>, Recorder<Int>, SubscriptionToken) {
    let container = StateContainer(0, key: key, storage: try SQLiteStorage(path: database.path), externalChanges: onlyPush)
    let seen = Recorder<Int>()
    return (container, seen, container.observe { seen.append($0) })
}

/// Another process commits to a database while containers and monitors here watch it. Serialized: each test runs
/// other processes.
@Suite("Watching SQLite for changes other processes make", .serialized)
struct SQLiteWatchingTests {
    @Test func aValueAnotherProcessStoresReachesTheListenersWithoutAPoll() async throws {
        let database = TemporaryDatabase()
        let (count, seen, token) = try followed("pushed", in: database)
        #expect(try await Worker(database: database, key: "pushed", "set", "77").finish())
        #expect(await eventually { count.value == 77 && seen.elements.last == 77 })
        #expect(seen.elements == [77])
        token.cancel()
    }

    @Test func aCheckpointThatTruncatesTheLogLosesNoChange() async throws {
        let database = TemporaryDatabase()
        let count = StateContainer(0, key: "truncated", storage: try SQLiteStorage(path: database.path), externalChanges: onlyPush)
        #expect(try await Worker(database: database, key: "truncated", "checkpoint", "1").finish())
        #expect(await eventually { count.value == 1 })
        let wal = (try? FileManager.default.attributesOfItem(atPath: database.path + "-wal"))?[.size] as? Int
        #expect(wal == 0 || wal == nil, "the worker's checkpoint did not truncate the log")
        // The log starts again from its beginning: commits there are seen too.
        #expect(try await Worker(database: database, key: "truncated", "set", "2").finish())
        #expect(await eventually { count.value == 2 })
        #expect(try await Worker(database: database, key: "truncated", "checkpoint", "3").finish())
        #expect(await eventually { count.value == 3 })
    }

    @Test func theWatchSurvivesAThousandRapidCommitsAndDeliversTheLast() async throws {
        let database = TemporaryDatabase()
        let (count, seen, token) = try followed("burst", in: database)
        #expect(try await Worker(database: database, key: "burst", "count", "1000").finish())
        #expect(await eventually { count.value == 1_000 })
        #expect(zip(seen.elements, seen.elements.dropFirst()).allSatisfy { $0 < $1 })
        #expect(try await Worker(database: database, key: "burst", "set", "7").finish())
        #expect(await eventually { count.value == 7 })
        token.cancel()
    }

    @Test func containersAndMonitorsOnOneDatabaseShareOneWatch() async throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let containers = (0..<16).map { StateContainer(0, key: "shared.\($0)", storage: storage, externalChanges: onlyPush) }
        let other = StateContainer(0, key: "shared.other", storage: try SQLiteStorage(path: database.path), externalChanges: onlyPush)
        let calls = Recorder<Int>()
        let monitor = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) { calls.append(1) }
        #expect(try DatabaseWatch.shared(path: database.path) === DatabaseWatch.shared(path: database.path))
        #if os(Linux)
        #expect(KernelWatches.inotifyWatches(on: database.directory.path) == 1)
        #endif
        #expect(try await Worker(database: database, key: "shared.3", "set", "3").finish())
        #expect(await eventually { containers[3].value == 3 && !calls.elements.isEmpty })
        #expect(containers.enumerated().allSatisfy { index, container in container.value == (index == 3 ? 3 : 0) })
        #expect(other.value == 0)
        withExtendedLifetime(monitor) {}
    }

    @Test func theMonitorIsToldOfAnotherProcessesCommitWithoutAPoll() async throws {
        let database = TemporaryDatabase()
        _ = try SQLiteStorage(path: database.path)  // the schema exists before the monitor starts
        let calls = Recorder<Int>()
        let monitor = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) { calls.append(1) }
        #expect(try await Worker(database: database, key: "k", "set", "1").finish())
        #expect(await eventually { calls.count >= 1 })
        withExtendedLifetime(monitor) {}
    }

    /// A database deleted while still watched, and another created elsewhere with the file number (inode) the
    /// first one had: ext4 hands a freed number to the next file at once, so tests (and apps) that delete and create
    /// databases meet this often. Watches shared by file number alone would give the new database the old one's
    /// watch, which watches the old path: its monitors would never be told. A hard link makes the same file number
    /// at another path here, every time.
    @Test func aDatabaseWithTheFileNumberOfADeletedOneStillWatchedGetsAWatchOfItsOwn() async throws {
        let old = TemporaryDatabase()
        _ = try SQLiteStorage(path: old.path)
        let oldMonitor = try DatabaseChangeMonitor(path: old.path, safetyNet: .seconds(3600)) {}
        let oldWatch = try DatabaseWatch.shared(path: old.path)
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        #expect(link(old.path, database.path) == 0)
        #expect(unlink(old.path) == 0)
        #expect(try DatabaseWatch.shared(path: database.path) !== oldWatch)
        let calls = Recorder<Int>()
        let monitor = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) { calls.append(1) }
        #expect(try await Worker(database: database, key: "k", "set", "1").finish())
        #expect(await eventually { calls.count >= 1 }, "the monitor watched the deleted database's path")
        // The deleted database's path names no database, though its watch lives on.
        #expect(throws: StorageError.self) { try DatabaseChangeMonitor(path: old.path) {} }
        withExtendedLifetime((monitor, oldMonitor, oldWatch)) {}
    }

    @Test func theMonitorIsToldWhenTheDatabaseFileIsReplaced() async throws {
        let database = TemporaryDatabase()
        _ = try SQLiteStorage(path: database.path)
        let calls = Recorder<Int>()
        let monitor = try DatabaseChangeMonitor(path: database.path, safetyNet: .seconds(3600)) { calls.append(1) }
        let replacement = database.directory.appendingPathComponent("replacement.sqlite")
        _ = try SQLiteStorage(path: replacement.path)
        #expect(rename(replacement.path, database.path) == 0)
        #expect(await eventually { calls.count >= 1 })
        withExtendedLifetime(monitor) {}
    }

    @Test func releasingTheLastFollowerEndsTheWatch() async throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        do {
            let count = StateContainer(0, key: "released", storage: storage, externalChanges: onlyPush)
            let monitor = try DatabaseChangeMonitor(path: database.path) {}
            #if os(Linux)
            #expect(KernelWatches.inotifyWatches(on: database.directory.path) == 1)
            #endif
            withExtendedLifetime((count, monitor)) {}
        }
        #if os(Linux)
        #expect(await eventually { KernelWatches.inotifyWatches(on: database.directory.path) == 0 })
        #endif
    }
}

/// The decisions of a database watch, with no connection, queue or kernel.
@Suite("Database change check")
struct DatabaseChangeCheckTests {
    static let file = DatabaseMark.FileIdentity(device: 1, inode: 2)

    @Test func onlyADifferentMarkIsAChange() {
        var check = DatabaseChangeCheck(baseline: DatabaseMark(dataVersion: 1, files: [Self.file, nil, nil]))
        var changes: [Bool] = []
        for version in [1, 2, 2] {
            changes.append(check.read(DatabaseMark(dataVersion: version, files: [Self.file, nil, nil])))
        }
        // The database file replaced: the version of the old file says nothing more, the identity tells.
        changes.append(check.read(DatabaseMark(dataVersion: 2, files: [DatabaseMark.FileIdentity(device: 1, inode: 3), nil, nil])))
        #expect(changes == [false, true, false, true])
    }

    @Test func fileEventsMakeTheNextCheckWaitForTheWriterAndBurstsQueueOneCheck() {
        var check = DatabaseChangeCheck(baseline: DatabaseMark(dataVersion: 1, files: []))
        let queued = [
            check.requested(waitingForWriter: false), check.requested(waitingForWriter: true),
            check.requested(waitingForWriter: false),
        ]
        #expect(queued == [true, false, false])
        let firstWaits = check.starts()  // a file event came before it started: it waits for the writer
        let queuedAgain = check.requested(waitingForWriter: false)
        let secondWaits = check.starts()  // a poll only
        #expect(firstWaits && queuedAgain && !secondWaits)
    }
}
