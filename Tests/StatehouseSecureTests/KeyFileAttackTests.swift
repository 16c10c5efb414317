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

/// A named pipe where a sealed value's file should be: reading it would wait for a writer that never comes.
@Suite("Sealed files that are not files", .serialized)
struct SealedFileAttackTests {
    @Test func aNamedPipeInPlaceOfASealedValueIsAnErrorAndTheContainerStartsFromItsDefault() async throws {
        let directory = TemporaryDirectory()
        let storage = EncryptedStorage(directory: directory.url, key: .random())
        try storage.save(Data("1".utf8), key: "secure.pipe")
        let file = directory.file(of: "secure.pipe")
        try FileManager.default.removeItem(at: file)
        #expect(mkfifo(file.path, 0o600) == 0)
        let outcome = Locked<(value: Int, error: StorageError?)?>(nil)
        Thread.detachNewThread {
            let container = StateContainer(0, key: "secure.pipe", storage: storage, externalChanges: .ignore)
            outcome.withLock { $0 = (container.value, container.storageError?.value) }
        }
        let returned = await eventually { outcome.withLock { $0 != nil } }
        if !returned {
            let writer = open(file.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        #expect(returned, "the container is still waiting on the named pipe")
        let (value, error) = try #require(outcome.withLock { $0 })
        #expect(value == 0)
        #expect(error?.kind == .io)
        #expect(error?.message.contains("not a regular file") == true, "\(String(describing: error))")
        // Left as it was: nothing was written over it.
        var info = stat()
        #expect(lstat(file.path, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO)
    }
}
