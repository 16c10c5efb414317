import Foundation
import Testing
@testable import Statehouse

/// A temporary directory, removed when the value is released.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-\(UUID().uuidString)")
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
        let suite = "statehouse.tests.\(url.lastPathComponent)"
        UserDefaults.standard.removePersistentDomain(forName: suite)
        // On Linux the emptied suite stays as a file: remove it too.
        let suiteFile = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config/\(suite).plist")
        try? FileManager.default.removeItem(at: suiteFile)
    }
}

enum StorageKind: String, CaseIterable, Sendable {
    case memory, file, userDefaults

    /// A storage of this kind, empty, that lives in `directory` or (for UserDefaults) in a suite of its own.
    func make(in directory: TemporaryDirectory) -> any StateStorage {
        switch self {
        case .memory: MemoryStorage()
        case .file: FileStorage(directory: directory.url)
        case .userDefaults: UserDefaultsStorage(suiteName: "statehouse.tests.\(directory.url.lastPathComponent)")
        }
    }
}

@Suite("Storages", .serialized)
struct StorageTests {
    @Test(arguments: StorageKind.allCases)
    func saveLoadRemove(kind: StorageKind) throws {
        let directory = TemporaryDirectory()
        let storage = kind.make(in: directory)
        #expect(try storage.load(key: "a") == nil)
        try storage.save(Data("one".utf8), key: "a")
        try storage.save(Data("two".utf8), key: "a")
        #expect(try storage.load(key: "a") == Data("two".utf8))
        try storage.remove(key: "a")
        try storage.remove(key: "a")
        #expect(try storage.load(key: "a") == nil)
    }

    static let hostileKeys = [
        "../x", "../../etc/passwd", "/", "/absolute", "a/b", "a\0b", "", ".", "..", "%2E",
        "日本語🙂", String(repeating: "k", count: 1_000), String(repeating: "🙂", count: 300), "CON", "name.state",
    ]

    @Test func hostileKeysStayInTheDirectoryAndDoNotCollide() throws {
        let directory = TemporaryDirectory()
        let storage = FileStorage(directory: directory.url)
        for (index, key) in Self.hostileKeys.enumerated() {
            try storage.save(Data("\(index)".utf8), key: key)
        }
        for (index, key) in Self.hostileKeys.enumerated() {
            #expect(try storage.load(key: key) == Data("\(index)".utf8), "key \(key.debugDescription)")
            #expect(storage.fileURL(for: key).deletingLastPathComponent().standardizedFileURL.path == directory.url.standardizedFileURL.path)
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.url.path)
        #expect(files.count == Self.hostileKeys.count)
        #expect(files.allSatisfy { $0.utf8.count <= 255 })
        #expect(!FileManager.default.fileExists(atPath: directory.url.deletingLastPathComponent().appendingPathComponent("x").path))
    }

    @Test func userDefaultsChangesReachAnotherInstanceOfTheSuite() throws {
        let suite = "statehouse.tests.\(UUID().uuidString)"
        defer { UserDefaults.standard.removePersistentDomain(forName: suite) }
        try UserDefaultsStorage(suiteName: suite).save(Data("kept".utf8), key: "k")
        #expect(try UserDefaultsStorage(suiteName: suite).load(key: "k") == Data("kept".utf8))
        #expect(StorageKind.userDefaults.rawValue == "userDefaults")
    }

    @Test func filesAreReadableByTheirOwnerOnly() throws {
        let directory = TemporaryDirectory()
        let storage = FileStorage(directory: directory.url)
        try storage.save(Data("secret".utf8), key: "token")
        let file = try FileManager.default.attributesOfItem(atPath: storage.fileURL(for: "token").path)
        let folder = try FileManager.default.attributesOfItem(atPath: directory.url.path)
        #expect((file[.posixPermissions] as? Int) == 0o600)
        #expect((folder[.posixPermissions] as? Int) == 0o700)
    }

    @Test func noTemporaryFilesAreLeftBehind() throws {
        let directory = TemporaryDirectory()
        let storage = FileStorage(directory: directory.url)
        for index in 0..<20 { try storage.save(Data("\(index)".utf8), key: "k") }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.url.path) == ["k.state"])
    }
}
