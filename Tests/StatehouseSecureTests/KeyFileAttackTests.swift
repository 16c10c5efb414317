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

/// Key files an attacker or an accident puts where the key should be.
@Suite("Key files that are not what they seem", .serialized)
struct KeyFileAttackTests {
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
