import Dispatch
import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

@Suite("Encryption keys", .serialized)
struct EncryptionKeyTests {
    @Test func theFirstLoadCreatesAnOwnerOnlyKeyFileAndLaterLoadsReadIt() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("nested/state.key")
        let created = try EncryptionKey.loadOrCreate(at: url)
        let attributes = try FileManager.default.attributesOfItem(atPath: url.path)
        #expect(attributes[.posixPermissions] as? Int == 0o600)
        #expect(attributes[.size] as? Int == 32)
        let folder = try FileManager.default.attributesOfItem(atPath: url.deletingLastPathComponent().path)
        #expect(folder[.posixPermissions] as? Int == 0o700)
        #expect(try EncryptionKey.loadOrCreate(at: url) == created)
        #expect(try EncryptionKey(bytes: Data(contentsOf: url)) == created)
    }

    @Test func threadsRacingToCreateTheKeyFileAllGetTheOneThatWon() async throws {
        for _ in 0..<20 {
            let directory = TemporaryDirectory()
            let url = directory.url.appendingPathComponent("race.key")
            let keys = Recorder<Result<EncryptionKey, StorageError>>()
            await onNewThreads(8) { _ in
                keys.append(Result { () throws(StorageError) in try EncryptionKey.loadOrCreate(at: url) })
            }
            let loaded = try keys.elements.map { try $0.get() }
            let kept = try EncryptionKey.loadOrCreate(at: url)
            #expect(loaded.count == 8)
            #expect(loaded.allSatisfy { $0 == kept })
            #expect(directory.names == ["race.key"])  // no temporary file left behind
        }
    }

    @Test(arguments: [0, 16, 31, 33, 64])
    func aKeyFileOfTheWrongSizeIsRefusedAndLeftAlone(size: Int) throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("state.key")
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let contents = Data((0..<size).map { UInt8(truncatingIfNeeded: $0) })
        #expect(FileManager.default.createFile(atPath: url.path, contents: contents, attributes: [.posixPermissions: 0o600]))
        let error = try #require(throws: StorageError.self) { try EncryptionKey.loadOrCreate(at: url) }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("holds \(size) bytes"))
        #expect(try Data(contentsOf: url) == contents)
    }

    @Test(arguments: [0o640, 0o604, 0o644, 0o660, 0o602, 0o620])
    func aKeyFileThatGroupOrOthersMayAccessIsRefused(mode: Int) throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("state.key")
        _ = try EncryptionKey.loadOrCreate(at: url)
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: url.path)
        let error = try #require(throws: StorageError.self) { try EncryptionKey.loadOrCreate(at: url) }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("chmod 600 \(url.path)"))
        #expect(error.message.contains("mode \(String(mode, radix: 8))"))
    }

    @Test func aDirectoryWhereTheKeyFileShouldBeIsRefused() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("state.key")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let error = try #require(throws: StorageError.self) { try EncryptionKey.loadOrCreate(at: url) }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("not a regular file"))
    }

    @Test func aKeyFileInAFolderThatCannotBeCreatedIsAnIOError() throws {
        let directory = TemporaryDirectory()
        let blocker = directory.url.appendingPathComponent("file")
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: blocker.path, contents: Data()))
        let error = try #require(throws: StorageError.self) {
            try EncryptionKey.loadOrCreate(at: blocker.appendingPathComponent("state.key"))
        }
        #expect(error.kind == .io)
        #expect(error.cause != nil)
    }

    @Test func aKeyFromBytesOrBase64MustBe256Bits() throws {
        let bytes = Data((0..<32).map { UInt8($0) })
        let key = try EncryptionKey(bytes: bytes)
        #expect(try EncryptionKey(base64Encoded: bytes.base64EncodedString()) == key)
        #expect(try EncryptionKey(base64Encoded: "  \(bytes.base64EncodedString())\n") == key)  // as `echo` writes it
        #expect(try EncryptionKey(bytes: Data(repeating: 1, count: 32)) != key)
        for wrong in [Data(), Data(count: 16), Data(count: 31), Data(count: 33)] {
            let error = try #require(throws: StorageError.self) { try EncryptionKey(bytes: wrong) }
            #expect(error.kind == .invalidConfiguration)
            #expect(error.message.contains("must be 32 bytes"))
            #expect(throws: StorageError.self) { try EncryptionKey(base64Encoded: wrong.base64EncodedString()) }
        }
    }

    @Test func textThatIsNotBase64IsRefusedWithoutBeingRepeated() throws {
        let text = "not base64 at all: \(uniqueSecret())"
        let error = try #require(throws: StorageError.self) { try EncryptionKey(base64Encoded: text) }
        #expect(error.kind == .invalidConfiguration)
        #expect(!"\(error)".contains(text))
        #expect(!error.message.contains("correct-horse"))
    }

    @Test func printingAKeyNeverShowsItsBytes() throws {
        let bytes = Data((0..<32).map { UInt8(200 + $0 % 50) })
        let key = try EncryptionKey(bytes: bytes)
        var dumped = ""
        dump(key, to: &dumped)
        let hex = bytes.map { String(format: "%02x", $0) }.joined()
        let decimal = bytes.map { "\($0)" }.joined(separator: ", ")
        for shown in ["\(key)", String(reflecting: key), dumped, "\([key])", "\(Mirror(reflecting: key).children.map(\.value))"] {
            #expect(!shown.contains(bytes.base64EncodedString()))
            #expect(!shown.lowercased().contains(hex))
            #expect(!shown.contains(decimal))
            #expect(!shown.contains("\(bytes.first!)"))
        }
        #expect("\(key)" == "EncryptionKey(256 bits, redacted)")
    }

    @Test func randomKeysDiffer() {
        #expect(EncryptionKey.random() != EncryptionKey.random())
    }

    // MARK: Key files that are not what they seem

    // What an attacker or an accident puts where the key file should be.

    /// As root, a file another user owns opens: whoever owns it chose the key every value would be sealed with (a
    /// swapped folder, a planted file), so it must be refused, not used.
    @Test(.enabled(if: geteuid() == 0, "only root can give a file to another user"))
    func aKeyFileOwnedByAnotherUserIsRefused() throws {
        let directory = TemporaryDirectory()
        let url = directory.url.appendingPathComponent("state.key")
        _ = try EncryptionKey.loadOrCreate(at: url)
        #expect(chown(url.path, 65_534, 65_534) == 0)
        let error = try #require(throws: StorageError.self) { try EncryptionKey.loadOrCreate(at: url) }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("owned by user 65534"))
        #expect(error.message.contains("chown"))
    }

    /// A named pipe in place of the key file: opening it to read waits for a writer that never comes.
    @Test func aNamedPipeWhereTheKeyFileShouldBeIsRefusedWithoutWaiting() async throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let url = directory.url.appendingPathComponent("state.key")
        #expect(mkfifo(url.path, 0o600) == 0)
        let outcome = Locked<Result<EncryptionKey, StorageError>?>(nil)
        Thread.detachNewThread {
            let result = Result { () throws(StorageError) in try EncryptionKey.loadOrCreate(at: url) }
            outcome.withLock { $0 = result }
        }
        let returned = await eventually { outcome.withLock { $0 != nil } }
        if !returned {
            // Let the stuck thread go: a writer opening the pipe ends its wait.
            let writer = open(url.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        #expect(returned, "loadOrCreate is still waiting on the named pipe")
        guard case .failure(let error) = outcome.withLock({ $0 }) else {
            Issue.record("a named pipe gave a key")
            return
        }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("not a regular file"))
    }

    /// A link to a key file that does not exist (a secret volume not mounted yet) is a configuration error that says
    /// so: creating a key there would put it wherever the link points.
    @Test func aLinkToAMissingKeyFileSaysThatTheLinkLeadsNowhere() throws {
        let directory = TemporaryDirectory()
        try FileManager.default.createDirectory(at: directory.url, withIntermediateDirectories: true)
        let url = directory.url.appendingPathComponent("state.key")
        let target = directory.url.appendingPathComponent("unmounted/state.key")
        try FileManager.default.createSymbolicLink(at: url, withDestinationURL: target)
        let error = try #require(throws: StorageError.self) { try EncryptionKey.loadOrCreate(at: url) }
        #expect(error.kind == .invalidConfiguration)
        #expect(error.message.contains("symbolic link"))
        #expect(error.message.contains(target.path))
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }

    /// The documented way secret volumes mount keys: a link to an owner-only file is followed.
    @Test func aLinkToAGoodKeyFileIsFollowed() throws {
        let directory = TemporaryDirectory()
        let target = directory.url.appendingPathComponent("volume/state.key")
        let created = try EncryptionKey.loadOrCreate(at: target)
        let url = directory.url.appendingPathComponent("state.key")
        try FileManager.default.createSymbolicLink(at: url, withDestinationURL: target)
        #expect(try EncryptionKey.loadOrCreate(at: url) == created)
    }
}
