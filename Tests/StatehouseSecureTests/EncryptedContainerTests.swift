import Dispatch
import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing

struct Credentials: Codable, Equatable, Sendable {
    var user = ""
    var password = ""
}

@Suite("Containers on encrypted storage", .serialized)
struct EncryptedContainerTests {
    @Test func anOptionalTokenIsSavedLoadedAndRemovedByNil() throws {
        let directory = TemporaryDirectory()
        let key = EncryptionKey.random()
        let file = directory.file(of: "secure.apiToken")
        do {
            let token = StateContainer<String?>(nil, key: "secure.apiToken", storage: EncryptedStorage(directory: directory.url, key: key))
            #expect(token.value == nil)
            token.modify("s3cr3t-token")
            try token.flush()
        }
        #expect(FileManager.default.fileExists(atPath: file.path))
        #expect(try !directory.anyFileContains("s3cr3t-token"))
        let token = StateContainer<String?>(nil, key: "secure.apiToken", storage: EncryptedStorage(directory: directory.url, key: key))
        #expect(token.value == "s3cr3t-token")
        #expect(token.storageError?.value == nil)
        token.modify(nil)
        try token.flush()
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    /// Followed by push, as on a plain `FileStorage`: the container watches the directory (one inotify watch). The
    /// storage could not notify before, and containers polled it four times a second.
    @Test func aValueAnotherWriterSealsReachesTheListenersWithoutAPoll() async throws {
        let directory = TemporaryDirectory()
        let key = EncryptionKey.random()
        let credentials = StateContainer(
            Credentials(), key: "secure.pushed", storage: EncryptedStorage(directory: directory.url, key: key),
            externalChanges: .watch(safetyNet: .seconds(3600))
        )
        #if os(Linux)
        #expect(KernelWatches.inotifyWatches(on: directory.url.path) == 1)
        #endif
        let seen = Recorder<Credentials>()
        let token = credentials.observe { seen.append($0) }
        let outside = Credentials(user: "ann", password: uniqueSecret())
        try EncryptedStorage(directory: directory.url, key: key)
            .save(try JSONEncoder().encode(outside), key: "secure.pushed")
        #expect(await eventually { seen.elements.last == outside })
        token.cancel()
    }

    @Test func aCodableValueSurvivesAReopenWithTheKeyFromItsFile() throws {
        let directory = TemporaryDirectory()
        let keyFile = directory.url.appendingPathComponent("keys/state.key")
        let data = directory.url.appendingPathComponent("data")
        let secret = uniqueSecret()
        do {
            let storage = EncryptedStorage(directory: data, key: try .loadOrCreate(at: keyFile))
            let credentials = StateContainer(Credentials(), key: "secure.credentials", storage: storage)
            credentials.update { $0 = Credentials(user: "ada", password: secret) }
            try credentials.flush()
        }
        let storage = EncryptedStorage(directory: data, key: try .loadOrCreate(at: keyFile))
        let reopened = StateContainer(Credentials(), key: "secure.credentials", storage: storage)
        #expect(reopened.value == Credentials(user: "ada", password: secret))
        #expect(try !directory.anyFileContains(secret))
    }

    @Test func manyThreadsUpdatingLoseNoIncrementAndTheTotalIsStored() async throws {
        let directory = TemporaryDirectory()
        let key = EncryptionKey.random()
        do {
            let count = StateContainer(0, key: "secure.count", storage: EncryptedStorage(directory: directory.url, key: key))
            await onNewThreads(8) { _ in
                for _ in 0..<1_000 { count.update { $0 += 1 } }
            }
            #expect(count.value == 8_000)
            try count.flush()
        }
        let stored = try #require(try EncryptedStorage(directory: directory.url, key: key).load(key: "secure.count"))
        #expect(try JSONDecoder().decode(Int.self, from: stored) == 8_000)
    }

    @Test func aChangeSavedByAnotherWriterReachesTheContainer() async throws {
        let directory = TemporaryDirectory()
        let key = EncryptionKey.random()
        let count = StateContainer(
            0, key: "secure.outside", storage: EncryptedStorage(directory: directory.url, key: key),
            externalChanges: .poll(every: .milliseconds(20))
        )
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        // Another process, as far as the container can tell: another storage on the same directory and key.
        try EncryptedStorage(directory: directory.url, key: key).save(try JSONEncoder().encode(42), key: "secure.outside")
        #expect(await eventually { count.value == 42 })
        // The value is visible before its listeners are called: their call may still be on its way.
        #expect(await eventually { seen.elements.last == 42 })
        token.cancel()
    }
}
