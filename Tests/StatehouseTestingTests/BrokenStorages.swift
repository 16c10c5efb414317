import Foundation
import Statehouse
import StatehouseTesting

/// The data that the instances of one broken storage share, as processes share a directory.
final class Backing: Sendable {
    let entries = Locked<[String: Data]>([:])
    /// What ``TearingStorage`` instances on these entries show and saw.
    let tears = TearLog()
}

/// An in-memory storage with the bugs it is told to have.
final class ShallowStorage: StateStorage {
    private let backing: Backing
    private let keyTransform: @Sendable (String) -> String
    private let saveTransform: @Sendable (Data) -> Data?
    private let failure: (any Error & Sendable)?
    private let appends: Bool
    private let ignoresRemoval: Bool
    /// What this instance loaded, if it caches: its own copy, which others' writes do not reach.
    private let cache: Locked<[String: Data]>?

    init(
        _ backing: Backing,
        keyTransform: @escaping @Sendable (String) -> String = { $0 },
        saveTransform: @escaping @Sendable (Data) -> Data? = { $0 },
        failure: (any Error & Sendable)? = nil,
        appends: Bool = false,
        caches: Bool = false,
        ignoresRemoval: Bool = false
    ) {
        self.backing = backing
        self.keyTransform = keyTransform
        self.saveTransform = saveTransform
        self.failure = failure
        self.appends = appends
        self.ignoresRemoval = ignoresRemoval
        self.cache = caches ? Locked([:]) : nil
    }

    func load(key: String) throws -> Data? {
        if let failure { throw failure }
        let key = keyTransform(key)
        if let cached = cache?.withLock({ $0[key] }) { return cached }
        let data = backing.entries.withLock { $0[key] }
        cache?.withLock { $0[key] = data }
        return data
    }

    func save(_ data: Data, key: String) throws {
        if let failure { throw failure }
        let key = keyTransform(key)
        cache?.withLock { $0[key] = data }
        backing.entries.withLock { entries in
            entries[key] = saveTransform(appends ? (entries[key] ?? Data()) + data : data)
        }
    }

    func remove(key: String) throws {
        if let failure { throw failure }
        if ignoresRemoval { return }
        let key = keyTransform(key)
        _ = cache?.withLock { $0.removeValue(forKey: key) }
        _ = backing.entries.withLock { $0.removeValue(forKey: key) }
    }
}

/// Reads all keys, changes one, and writes all back, unlocked: as a storage keeping every key in one file would
/// without a lock, it loses writes that land in between.
final class WholeFileStorage: StateStorage {
    private let backing: Backing

    init(_ backing: Backing) {
        self.backing = backing
    }

    func load(key: String) throws -> Data? {
        backing.entries.withLock { $0[key] }
    }

    func save(_ data: Data, key: String) throws {
        var all = backing.entries.withLock { $0 }
        all[key] = data
        usleep(200)  // the time a real file takes to write, in which other writers read the old file
        backing.entries.withLock { $0 = all }
    }

    func remove(key: String) throws {
        _ = backing.entries.withLock { $0.removeValue(forKey: key) }
    }
}

/// Claims to detect changes, with a fingerprint that never changes.
final class ConstantFingerprintStorage: ChangeDetectingStorage {
    private let base: ShallowStorage

    init(_ backing: Backing) {
        base = ShallowStorage(backing)
    }

    func load(key: String) throws -> Data? { try base.load(key: key) }
    func save(_ data: Data, key: String) throws { try base.save(data, key: key) }
    func remove(key: String) throws { try base.remove(key: key) }

    func fingerprint(key: String) throws -> StorageFingerprint {
        try base.load(key: key) == nil ? .absent : StorageFingerprint([1])
    }
}

/// A transaction that reads, then writes, with nothing keeping others out in between.
final class UnlockedTransactionStorage: TransactionalStorage {
    private let base: ShallowStorage
    private let revision = Locked<Int64>(0)

    init(_ backing: Backing) {
        base = ShallowStorage(backing)
    }

    func load(key: String) throws -> Data? { try base.load(key: key) }
    func remove(key: String) throws { try base.remove(key: key) }

    func save(_ data: Data, key: String) throws {
        try base.save(data, key: key)
        revision.withLock { $0 += 1 }
    }

    func fingerprint(key: String) throws -> StorageFingerprint {
        try base.load(key: key) == nil ? .absent : StorageFingerprint([revision.withLock { $0 }])
    }

    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        let data = try transform(try load(key: key))
        usleep(200)  // another writer's transaction reads the same value meanwhile
        if let data { try save(data, key: key) } else { try remove(key: key) }
        return try fingerprint(key: key)
    }
}

/// Keeps keys that start with `../` in files named by the key as it is, which takes them out of its directory; the
/// others in memory.
final class EscapingStorage: StateStorage {
    private let memory: ShallowStorage
    private let directory: URL

    init(_ backing: Backing, directory: URL) {
        memory = ShallowStorage(backing)
        self.directory = directory
    }

    func load(key: String) throws -> Data? {
        guard key.hasPrefix("../") else { return try memory.load(key: key) }
        return try? Data(contentsOf: directory.appendingPathComponent(key))
    }

    func save(_ data: Data, key: String) throws {
        guard key.hasPrefix("../") else { return try memory.save(data, key: key) }
        let file = directory.appendingPathComponent(key)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: file)
    }

    func remove(key: String) throws {
        guard key.hasPrefix("../") else { return try memory.remove(key: key) }
        try? FileManager.default.removeItem(at: directory.appendingPathComponent(key))
    }
}

/// Keeps each key in a file named by the key, and throws what Foundation throws, or (`wrapsErrors`) a
/// `StorageError` that names neither the key nor the operation. With `base64`, files hold their data in Base64, and
/// one that is not fails to load.
struct PlainFileStorage: StateStorage {
    let directory: URL
    var wrapsErrors = false
    var base64 = false

    func load(key: String) throws -> Data? {
        let file = directory.appendingPathComponent(key)
        guard FileManager.default.fileExists(atPath: file.path) else { return nil }
        return try wrapping {
            let contents = try Data(contentsOf: file)
            guard base64 else { return contents }
            guard let data = Data(base64Encoded: contents) else { throw CocoaError(.fileReadCorruptFile) }
            return data
        }
    }

    func save(_ data: Data, key: String) throws {
        try wrapping {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try (base64 ? data.base64EncodedData() : data).write(to: directory.appendingPathComponent(key))
        }
    }

    func remove(key: String) throws {
        let file = directory.appendingPathComponent(key)
        guard FileManager.default.fileExists(atPath: file.path) else { return }
        try wrapping { try FileManager.default.removeItem(at: file) }
    }

    private func wrapping<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch  where wrapsErrors {
            throw StorageError(.io, key: nil, message: "Something failed.", cause: error)
        }
    }
}

/// Crash writers that do not do their job.
enum BrokenWriters {
    /// No such program.
    static let missing = StorageConformance.CrashWriter(
        executable: URL(fileURLWithPath: "/nonexistent/statehouse-writer")
    ) { _, _, _ in [] }

    /// Ends at once, without a word.
    static let silent = StorageConformance.CrashWriter(executable: URL(fileURLWithPath: "/bin/sh")) { _, _, _ in
        ["-c", "exit 0"]
    }

    /// Stores something that is not a counter (in ``PlainFileStorage``'s file for the key), says it is ready, and
    /// waits to be killed; `exec`, so that the kill ends the wait too.
    static let garbage = StorageConformance.CrashWriter(executable: URL(fileURLWithPath: "/bin/sh")) { place, key, _ in
        [
            "-c", #"mkdir -p "$0" && printf 'not a counter' > "$0/$1" && echo ready && exec sleep 30"#,
            place.directory.path, key,
        ]
    }
}
