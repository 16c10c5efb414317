import Foundation
import Statehouse
import StatehouseSQLite
import StatehouseTestSupport
import Testing

struct Settings: Codable, Equatable, Sendable {
    var theme = "blue"
}

/// A database path in a directory of its own, removed afterwards.
final class TemporaryDatabase: Sendable {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-sqlite-\(UUID().uuidString)")
    var path: String { directory.appendingPathComponent("state.sqlite").path }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }
}

@Suite("SQLite storage", .serialized)
struct SQLiteStorageTests {
    @Test func saveLoadRemoveAndHostileKeys() throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let keys = ["../x", "", "a\0b", "日本語🙂", String(repeating: "k", count: 10_000), "'; DROP TABLE statehouse_state; --"]
        for (index, key) in keys.enumerated() { try storage.save(Data("\(index)".utf8), key: key) }
        for (index, key) in keys.enumerated() { #expect(try storage.load(key: key) == Data("\(index)".utf8)) }
        try storage.remove(key: "")
        #expect(try storage.load(key: "") == nil)
        #expect(try storage.keys().count == keys.count - 1)
    }

    @Test func keysWithNULBytesAreKeptWholeNotCutAtTheFirstNUL() throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let keys = ["a", "a\0b", "a\0c", "", "\0", "\0\0"]
        for (index, key) in keys.enumerated() { try storage.save(Data("\(index)".utf8), key: key) }
        let reopened = try SQLiteStorage(path: database.path)
        for (index, key) in keys.enumerated() { #expect(try reopened.load(key: key) == Data("\(index)".utf8)) }
        #expect(try reopened.keys() == keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) })
        try reopened.remove(key: "a\0b")
        #expect(try storage.load(key: "a\0b") == nil)
        #expect(try storage.load(key: "a") == Data("0".utf8))
        #expect(try storage.fingerprint(key: "a\0c") != storage.fingerprint(key: "a"))
    }

    @Test func aContainerPersistsThroughSQLiteAcrossOpenings() throws {
        let database = TemporaryDatabase()
        do {
            let settings = StateContainer(Settings(), key: "sqlite.settings", storage: try SQLiteStorage(path: database.path))
            settings.update { $0.theme = "green" }
            try settings.flush()
        }
        let reopened = StateContainer(Settings(), key: "sqlite.settings", storage: .sqlite(path: database.path))
        #expect(reopened.value == Settings(theme: "green"))
    }

    @Test func theDatabaseIsOwnerOnlyAndInWALMode() throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        try storage.save(Data("x".utf8), key: "k")
        let attributes = try FileManager.default.attributesOfItem(atPath: database.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(FileManager.default.fileExists(atPath: database.path + "-wal"))
    }

    @Test func aFileThatIsNotADatabaseIsAClearError() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        try Data(repeating: 0x42, count: 4096).write(to: URL(fileURLWithPath: database.path))
        #expect {
            try SQLiteStorage(path: database.path)
        } throws: { error in
            (error as? StorageError)?.message.contains("Could not open the SQLite database") == true
        }
    }
}

@Suite("SQLite changes made by others", .serialized)
struct SQLiteExternalChangeTests {
    @Test func aRowChangedThroughAnotherConnectionReachesTheContainer() async throws {
        let database = TemporaryDatabase()
        let settings = StateContainer(Settings(), key: "sqlite.external", storage: try SQLiteStorage(path: database.path),
                                      externalChanges: .poll(every: .milliseconds(20)))
        let other = try SQLiteStorage(path: database.path)  // its own connections, like another process
        try other.save(try JSONEncoder().encode(Settings(theme: "dark")), key: "sqlite.external")
        _ = await eventually { settings.value.theme == "dark" }
        #expect(settings.value == Settings(theme: "dark"))
        try other.remove(key: "sqlite.external")
        try other.save(try JSONEncoder().encode(Settings(theme: "light")), key: "sqlite.external")
        _ = await eventually { settings.value.theme == "light" }
        #expect(settings.value == Settings(theme: "light"))
    }

    /// Bad bytes another process (here another connection to the same file) stores while a local change waits for
    /// its coalesced write are kept aside before that write replaces them.
    @Test func badBytesStoredDuringTheCoalescingWindowSurviveTheFlush() throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let other = try SQLiteStorage(path: database.path)
        let key = "keepAside.sqlite.window"
        // A window no test waits for: the flush writes the change. The watch skips the key meanwhile (a local
        // change is pending), so only the write itself can notice the bytes.
        let count = StateContainer(0, key: key, storage: storage, writes: .coalesced(window: .seconds(3600)))
        count.modify(1)
        let garbage = Data("tampered".utf8)
        try other.save(garbage, key: key)
        try count.flush()
        #expect(try other.load(key: key) == Data("1".utf8))
        let kept = try other.keys().filter { $0.hasPrefix("\(key).undecodable.") }
        #expect(kept.count == 1)
        #expect(try kept.first.flatMap { try other.load(key: $0) } == garbage)
    }
}

@Suite("SQLite under contention", .serialized)
struct SQLiteContentionTests {
    @Test func storagesOpenedWhileAnotherWritesWaitForTheLock() async throws {
        let database = TemporaryDatabase()
        let writer = try SQLiteStorage(path: database.path)
        try writer.save(Data("0".utf8), key: "warm-up")
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for index in 0..<300 { try writer.save(Data("\(index)".utf8), key: "busy") }
            }
            for _ in 0..<10 {
                group.addTask {
                    let other = try SQLiteStorage(path: database.path)
                    try other.save(Data("x".utf8), key: "other")
                }
            }
            try await group.waitForAll()
        }
        #expect(try writer.load(key: "busy") == Data("299".utf8))
    }
}
