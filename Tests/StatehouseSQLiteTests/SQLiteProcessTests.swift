import Foundation
import Statehouse
import StatehouseSQLite
import StatehouseTestSupport
import Testing

/// Runs `StatehouseSQLiteWorker`, the helper executable built next to the test bundle.
struct Worker {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()

    init(database: TemporaryDatabase, key: String, _ arguments: String...) throws {
        process.executableURL = helperExecutable(named: "StatehouseSQLiteWorker")
        process.arguments = [database.path, key] + arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
    }

    /// Waits for the worker to print `ready`.
    func waitUntilReady() async {
        let output = output.fileHandleForReading
        let line = await offThePool { output.availableData }
        #expect(String(decoding: line, as: UTF8.self).hasPrefix("ready"))
    }

    func go() {
        input.fileHandleForWriting.write(Data("go\n".utf8))
    }

    /// Waits for the worker to exit; `true` if it succeeded.
    func finish() async -> Bool {
        let process = process
        return await offThePool {
            process.waitUntilExit()
            return process.terminationStatus == 0
        }
    }
}

@Suite("SQLite across processes", .serialized)
struct SQLiteProcessTests {
    @Test func twoProcessesIncrementingTheSameKeyLoseNoUpdate() async throws {
        let database = TemporaryDatabase()
        _ = try SQLiteStorage(path: database.path)  // the schema exists before either worker starts
        let workers = try (0..<2).map { _ in try Worker(database: database, key: "shared.counter", "increment", "1000") }
        for worker in workers { await worker.waitUntilReady() }
        for worker in workers { worker.go() }
        for worker in workers { #expect(await worker.finish()) }
        let counter = StateContainer(0, key: "shared.counter", storage: try SQLiteStorage(path: database.path))
        #expect(counter.value == 2_000)
    }

    @Test func aValueAnotherProcessStoresReachesTheListeners() async throws {
        let database = TemporaryDatabase()
        let count = StateContainer(0, key: "watched", storage: try SQLiteStorage(path: database.path),
                                   externalChanges: .poll(every: .milliseconds(20)))
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        #expect(try await Worker(database: database, key: "watched", "set", "77").finish())
        _ = await eventually { seen.elements.last == 77 }
        #expect(seen.elements == [77])
        #expect(count.value == 77)
        token.cancel()
    }
}

@Suite("SQLite transactional update", .serialized)
struct SQLiteTransactionalUpdateTests {
    @Test func updateStartsFromWhatAnotherWriterStored() throws {
        let database = TemporaryDatabase()
        let count = StateContainer(0, key: "count", storage: try SQLiteStorage(path: database.path), externalChanges: .ignore)
        let other = try SQLiteStorage(path: database.path)
        try other.save(Data("41".utf8), key: "count")
        #expect(count.value == 0)  // not polled: only `update` reads the storage
        count.update { $0 += 1 }
        #expect(count.value == 42)
        #expect(try other.load(key: "count") == Data("42".utf8))
    }

    /// SQLite wraps what the transform throws in a `StorageError` of its own: bytes another version stored that do not
    /// decode are still kept aside before the update writes over them.
    @Test func updateKeepsBytesThatDoNotDecodeAsideBeforeWritingOverThem() throws {
        let database = TemporaryDatabase()
        let count = StateContainer(0, key: "count", storage: try SQLiteStorage(path: database.path), externalChanges: .ignore)
        let other = try SQLiteStorage(path: database.path)
        let alien = Data(#"{"count": "a newer format"}"#.utf8)
        try other.save(alien, key: "count")
        count.update { $0 += 1 }
        #expect(count.value == 1)
        #expect(try other.load(key: "count") == Data("1".utf8))
        let kept = try #require(count.storageError?.value?.keptAside)
        #expect(try other.load(key: kept) == alien)
    }

    @Test func aLocalChangeWaitingToBeWrittenIsWhatUpdateStartsFrom() throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let count = StateContainer(0, key: "count", storage: storage, writes: .coalesced(window: .seconds(60)))
        count.modify(10)
        #expect(try storage.load(key: "count") == nil)
        count.update { $0 += 1 }
        #expect(count.value == 11)
        #expect(try storage.load(key: "count") == Data("11".utf8))
    }

    @Test func whatUpdateReturnsAndThrowsIsKept() throws {
        struct Refused: Error {}
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let count = StateContainer(5, key: "count", storage: storage)
        #expect(count.update { value -> Int in value *= 2; return value + 1 } == 11)
        #expect(throws: Refused.self) { try count.update { (_: inout Int) throws(Refused) in throw Refused() } }
        #expect(count.value == 10)
        #expect(try storage.load(key: "count") == Data("10".utf8))
    }

    @Test func concurrentUpdatesOnTwoConnectionsAreExact() async throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let other = try SQLiteStorage(path: database.path)
        let count = StateContainer(0, key: "count", storage: storage, externalChanges: .ignore)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { for _ in 0..<100 { count.update { $0 += 1 } } }
            }
            group.addTask {
                // Another writer incrementing the same row with its own transactions.
                for _ in 0..<100 {
                    _ = try? other.transact(key: "count") { data in
                        let value = data.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
                        return Data("\(value + 1)".utf8)
                    }
                }
            }
        }
        #expect(try storage.load(key: "count") == Data("500".utf8))
    }

    @Test func theFingerprintOfASaveIsThatOfTheStoredRow() throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let saved = try storage.saveReturningFingerprint(Data("1".utf8), key: "k")
        #expect(saved == (try storage.fingerprint(key: "k")))
        #expect(saved != .absent)
        let transacted = try storage.transact(key: "k") { _ in nil }
        #expect(transacted == .absent)
    }
}

@Suite("Database change monitor", .serialized)
struct DatabaseChangeMonitorTests {
    @Test func commitsByAnotherProcessAndThisOneAreReportedAndQuietIsNot() async throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let calls = Recorder<Int>()
        let monitor = try DatabaseChangeMonitor(path: database.path, every: .milliseconds(10)) { calls.append(1) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(calls.elements.isEmpty)  // nothing committed yet
        #expect(try await Worker(database: database, key: "k", "set", "1").finish())
        // The worker commits more than once (its storage's migration, then the value): polls that fall between its
        // commits report each, so count calls rather than expect exactly one (a ThreadSanitizer run saw two).
        // A generous deadline (`eventually`'s): the whole suite under ThreadSanitizer on two cores once kept the
        // monitor from polling for more than 5 s.
        #expect(await eventually { calls.elements.count >= 1 })
        try await Task.sleep(for: .milliseconds(100))  // lets the monitor see the worker's last commit, if not yet
        let afterWorker = calls.elements.count
        try storage.save(Data("2".utf8), key: "k")  // this process, another connection than the monitor's
        #expect(await eventually { calls.elements.count > afterWorker })
        _ = monitor
    }

    @Test func aMissingDatabaseIsAnError() {
        #expect(throws: (any Error).self) {
            try DatabaseChangeMonitor(path: "/nonexistent/dir/db.sqlite", every: .seconds(1)) {}
        }
    }

    @Test func releasingTheMonitorStopsIt() async throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let calls = Recorder<Int>()
        do {
            _ = try DatabaseChangeMonitor(path: database.path, every: .milliseconds(10)) { calls.append(1) }
        }
        try storage.save(Data("1".utf8), key: "k")
        try await Task.sleep(for: .milliseconds(100))
        #expect(calls.elements.isEmpty)
    }
}


@Suite("SQLite: a store migrated by another process", .serialized)
struct SQLiteStoreMigrationProcessTests {
    @Test func aStoreMigratedFromVersionOneToThreeByAnotherProcessIsFollowedHere() async throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        try storage.save(Data(#"{"value":{"name":"Ada"},"version":1}"#.utf8), key: "migration.profile")
        let follower = Store(
            initialState: VisitorProfile(fullName: "", visits: 0), key: "migration.profile", storage: storage,
            externalChanges: .poll(every: .milliseconds(20)), reducer: visitorReducer
        )
        // Loaded and migrated in memory; nothing written yet.
        #expect(follower.state == VisitorProfile(fullName: "Ada", visits: 0))
        let seen = Recorder<VisitorProfile>()
        let token = follower.subscribe { seen.append($0) }
        // The other process loads version 1 too, migrates it, applies three visits and stores version 3.
        let worker = try Worker(database: database, key: "migration.profile", "visit", "3")
        #expect(await worker.finish())
        #expect(await eventually { follower.state == VisitorProfile(fullName: "Ada", visits: 3) })
        let stored = try #require(try storage.load(key: "migration.profile"))
        #expect(String(decoding: stored, as: UTF8.self) == #"{"value":{"fullName":"Ada","visits":3},"version":3}"#)
        // The follower goes on from the other process's state.
        follower.dispatch(.visit)
        try follower.flush()
        let after = try JSONDecoder().decode(StoredProfile.self, from: try #require(try storage.load(key: "migration.profile")))
        #expect(after.version == 3 && after.value == VisitorProfile(fullName: "Ada", visits: 4))
        #expect(seen.elements.first == VisitorProfile(fullName: "Ada", visits: 0))
        token.cancel()
    }
}

/// How a `VisitorProfile` is stored.
private struct StoredProfile: Decodable {
    var version: Int
    var value: VisitorProfile
}
