import Dispatch
import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing

@Suite("Encrypted storage", .serialized)
struct EncryptedStorageTests {
    @Test func savedDataLoadsBackAndRemovalRemovesIt() throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        #expect(try storage.load(key: "token") == nil)
        try storage.remove(key: "token")  // nothing there: nothing to do
        for value in [Data("s3cr3t".utf8), Data(), Data(repeating: 7, count: 100_000)] {
            try storage.save(value, key: "token")
            #expect(try storage.load(key: "token") == value)
        }
        try storage.remove(key: "token")
        #expect(try storage.load(key: "token") == nil)
        #expect(!FileManager.default.fileExists(atPath: directory.file(of: "token").path))
    }

    @Test func valuesNeverAppearInPlaintextOnDiskOrInErrors() throws {
        let directory = TemporaryDirectory()
        let secret = uniqueSecret()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        try storage.save(Data(secret.utf8), key: "plain")
        let container = StateContainer(secret, key: "secure.plaintext", storage: storage, writes: .writeThrough)
        container.modify(secret + "!")
        #expect(try !directory.anyFileContains(secret))
        #expect(try !directory.anyFileContains(String(secret.prefix(12))))
        // The same bytes, opened with another key: the error and everything it carries name no value.
        let error = try #require(throws: StorageError.self) {
            try EncryptedStorage(directory: directory.url, key: .random()).load(key: "plain")
        }
        let texts = ["\(error)", error.message, String(reflecting: error), "\(error.cause.map { "\($0)" } ?? "")"]
        #expect(texts.allSatisfy { !$0.contains(String(secret.prefix(12))) })
        #expect(try !directory.anyFileContains(secret))  // nor in the bytes it kept aside
    }

    @Test func aSealedFileIsAFormatByteThenNonceCiphertextAndTag() throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        try storage.save(Data("12345".utf8), key: "format")
        let first = try Data(contentsOf: directory.file(of: "format"))
        #expect(first.first == 1)
        #expect(first.count == 1 + 12 + 5 + 16)
        // A fresh nonce for every seal: the same value never gives the same bytes.
        try storage.save(Data("12345".utf8), key: "format")
        #expect(try Data(contentsOf: directory.file(of: "format")) != first)
    }

    @Test func keysSwiftCallsEqualOpenEachOthersValues() throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        try storage.save(Data("latte".utf8), key: composed)
        #expect(try storage.load(key: decomposed) == Data("latte".utf8))
    }

    @Test func aHostileKeyStaysInsideTheDirectory() throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        try storage.save(Data("x".utf8), key: "../../escape")
        #expect(try storage.load(key: "../../escape") == Data("x".utf8))
        #expect(directory.file(of: "../../escape").deletingLastPathComponent().standardizedFileURL.path
            == directory.url.standardizedFileURL.path)
        #expect(!FileManager.default.fileExists(atPath: directory.url.deletingLastPathComponent().appendingPathComponent("escape").path))
    }

    @Test func filesAreReadableByTheirOwnerOnly() throws {
        let directory = TemporaryDirectory()
        try EncryptedStorage(directory: directory.url, key: .random()).save(Data("x".utf8), key: "mode")
        let file = try FileManager.default.attributesOfItem(atPath: directory.file(of: "mode").path)
        #expect(file[.posixPermissions] as? Int == 0o600)
        let folder = try FileManager.default.attributesOfItem(atPath: directory.url.path)
        #expect(folder[.posixPermissions] as? Int == 0o700)
    }

    @Test func aDirectoryThatCannotBeCreatedIsAnIOErrorWithTheKeyAndOperation() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let blocker = directory.url.appendingPathComponent("file")
        #expect(FileManager.default.createFile(atPath: blocker.path, contents: Data()))
        let storage = EncryptedStorage(directory: blocker.appendingPathComponent("sub"), key: .random())
        let error = try #require(throws: StorageError.self) { try storage.save(Data("x".utf8), key: "blocked") }
        #expect(error.kind == .io)
        #expect(error.key == "blocked")
        #expect(error.operation == .save)
        #expect(error.cause != nil)
    }

    @Test func theFingerprintChangesWithEverySaveAndRemoval() throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        #expect(try storage.fingerprint(key: "print") == .absent)
        let saved = try storage.saveReturningFingerprint(Data("1".utf8), key: "print")
        #expect(try storage.fingerprint(key: "print") == saved)
        try storage.save(Data("1".utf8), key: "print")
        #expect(try storage.fingerprint(key: "print") != saved)
        try storage.remove(key: "print")
        #expect(try storage.fingerprint(key: "print") == .absent)
    }

    @Test func manyThreadsWritingLeaveEveryKeyWithOneOfItsValues() async throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        let failures = Recorder<String>()
        await onNewThreads(8) { thread in
            for round in 0..<50 {
                do {
                    try storage.save(Data("\(thread).\(round)".utf8), key: "shared")
                    try storage.save(Data("\(round)".utf8), key: "own.\(thread)")
                    _ = try storage.load(key: "shared")
                } catch {
                    failures.append("\(error)")
                }
            }
        }
        #expect(failures.elements.isEmpty)
        for thread in 0..<8 {
            #expect(try storage.load(key: "own.\(thread)") == Data("49".utf8))
        }
        // The last save to land is the last round of the thread that finished last.
        let shared = String(decoding: try #require(try storage.load(key: "shared")), as: UTF8.self)
        #expect(shared.hasSuffix(".49"))
        #expect(directory.names.allSatisfy { !$0.hasSuffix(".tmp") && !$0.contains("unauthentic") })
    }
}
