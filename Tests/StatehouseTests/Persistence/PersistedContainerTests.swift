import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport
import StatehouseTesting

struct Settings: Codable, Equatable, Sendable {
    var theme = "blue"
    var fontSize = 12
}

/// The error of a full disk, as the failing-write tests inject it.
private func diskFull(_ key: String) -> InMemoryStorageFault {
    .fail(StorageError(.io, key: key, operation: .save, message: "No space left on device (simulated)."))
}

@Suite("Persisted containers", .serialized)
struct PersistedContainerTests {
    @Test(arguments: StorageKind.allCases)
    func loadsWhatWasSavedAndStartsFromTheDefaultOtherwise(kind: StorageKind) throws {
        let directory = TemporaryDirectory()
        let storage = kind.make(in: directory)
        do {
            let settings = StateContainer(Settings(), key: "persist.settings", storage: storage)
            #expect(settings.value == Settings())
            settings.update { $0.theme = "green" }
            try settings.flush()
        }
        let reloaded = StateContainer(Settings(), key: "persist.settings", storage: storage)
        #expect(reloaded.value == Settings(theme: "green"))
        #expect(reloaded.storageError?.value == nil)
    }

    @Test func nilOfAnOptionalRemovesTheEntry() throws {
        let storage = MemoryStorage()
        let rating = StateContainer<Int?>(nil, key: "persist.rating", storage: storage)
        rating.modify(4)
        try rating.flush()
        #expect(try storage.load(key: "persist.rating") == Data("4".utf8))
        rating ~> nil
        try rating.flush()
        #expect(try storage.load(key: "persist.rating") == nil)
    }

    @Test func coalescedWritesTurnABurstIntoOneWriteAndLoseNothing() throws {
        // A window that the clock never reaches, so that the count does not depend on the machine's speed (how many
        // writes 100,000 changes make with the default window is a benchmark's question).
        let memory = InMemoryStorage()
        let storage = memory.plain
        let count = StateContainer(
            0, key: "persist.burst", storage: storage, codec: .json, writes: .coalesced(window: .seconds(60)),
            externalChanges: .watch, clock: ManualClock()
        )
        for _ in 0..<100_000 { count.update { $0 += 1 } }
        try count.flush()
        try count.flush()
        #expect(memory.callCount(of: .save) == 1, "\(memory.callCount(of: .save)) writes")
        #expect(try storage.load(key: "persist.burst") == Data("100000".utf8))
    }

    @Test func writeThroughWritesEveryChangeBeforeReturning() throws {
        let memory = InMemoryStorage()
        let storage = memory.plain
        let count = StateContainer(0, key: "persist.through", storage: storage, writes: .writeThrough)
        for value in 1...5 {
            count.modify(value)
            #expect(try storage.load(key: "persist.through") == Data("\(value)".utf8))
        }
        #expect(memory.callCount(of: .save) == 5)
    }

    @Test func deallocationWritesWhatIsPending() throws {
        let storage = InMemoryStorage().plain
        do {
            let count = StateContainer(0, key: "persist.deinit", storage: storage, writes: .coalesced(window: .seconds(60)))
            count.modify(7)
        }
        #expect(try storage.load(key: "persist.deinit") == Data("7".utf8))
    }

    @Test func corruptDataStartsFromTheDefaultIsReportedAndKeptAside() throws {
        let storage = MemoryStorage()
        try storage.save(Data("{not json".utf8), key: "persist.corrupt")
        // A long window, so that `flush()` makes the write and reports it: a write the window ends in the meantime
        // reports on another thread, after the check below.
        let settings = StateContainer(
            Settings(), key: "persist.corrupt", storage: storage, writes: .coalesced(window: .seconds(60))
        )
        #expect(settings.value == Settings())
        let error = try #require(settings.storageError?.value)
        #expect(error.kind == .undecodable)
        #expect(error.message.contains("is not a Settings"))
        let aside = try #require(storage.keys.first { $0.hasPrefix("persist.corrupt.undecodable.") })
        #expect(try storage.load(key: aside) == Data("{not json".utf8))
        settings.update { $0.fontSize = 14 }
        try settings.flush()
        #expect(try storage.load(key: aside) == Data("{not json".utf8))
        #expect(settings.storageError?.value == nil)
    }

    @Test func aChangedTypeIsTreatedLikeCorruptData() throws {
        let storage = MemoryStorage()
        try storage.save(Data(#""just a string""#.utf8), key: "persist.changedType")
        let settings = StateContainer(Settings(), key: "persist.changedType", storage: storage)
        #expect(settings.value == Settings())
        #expect(settings.storageError?.value?.kind == .undecodable)
    }

    @Test func aFailedWriteIsReportedKeepsTheValueAndIsRetried() throws {
        let memory = InMemoryStorage()
        let storage = memory.plain
        let count = StateContainer(0, key: "persist.failing", storage: storage, writes: .coalesced(window: .seconds(60)))
        memory.inject(diskFull("persist.failing"), into: .save, .always)
        count.modify(1)
        #expect(throws: StorageError.self) { try count.flush() }
        #expect(count.value == 1)
        #expect(count.storageError?.value?.message.contains("No space left") == true)
        memory.removeFaults()
        try count.flush()
        #expect(try storage.load(key: "persist.failing") == Data("1".utf8))
        #expect(count.storageError?.value == nil)
    }

    @Test func unreadableStorageMakesTheContainerReadOnly() throws {
        struct Unreadable: StateStorage {
            let writes = InMemoryStorage()
            func load(key: String) throws -> Data? { throw StorageError(.io, key: key, message: "Permission denied.") }
            func save(_ data: Data, key: String) throws { try writes.save(data, key: key) }
            func remove(key: String) throws {}
        }
        let storage = Unreadable()
        let count = StateContainer(5, key: "persist.unreadable", storage: storage)
        count.modify(6)
        #expect(throws: StorageError.self) { try count.flush() }
        #expect(storage.writes.callCount(of: .save) == 0)
        #expect(count.storageError?.value?.message.contains("will not write") == true)
    }
}

@Suite("Persistence survives being killed", .serialized)
struct CrashTests {
    @Test func aProcessKilledAtAnyInstantLeavesADecodableValue() async throws {
        let directory = TemporaryDirectory()
        let storage = FileStorage(directory: directory.url)
        var lastSeen = 0
        for round in 0..<50 {
            let arguments = [directory.url.path, "crash.counter", "\(ProcessInfo.processInfo.processIdentifier)"]
            #expect(try await killHelperAtARandomInstant("StatehouseCrashWriter", arguments), "round \(round): the writer ended by itself")
            let data = try #require(try storage.load(key: "crash.counter"), "round \(round): nothing stored")
            let value = try JSONDecoder().decode(Int.self, from: data)
            #expect(value >= lastSeen, "round \(round): the stored value went back")
            lastSeen = value
        }
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: directory.url.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.count <= 50)  // a kill between create and rename may leave a temporary file, never a torn one
    }
}

@Suite("Persisted stores", .serialized)
struct PersistedStoreTests {
    @Test func aStoreSavesItsStateAndLoadsItBack() throws {
        let directory = TemporaryDirectory()
        do {
            let store = Store(initialState: Counter(), key: "persist.store", storage: .file(directory: directory.url), reducer: counterReducer)
            store.dispatch(.increment)
            store.dispatch(.rename("saved"))
            try store.flush()
        }
        let reopened = Store(initialState: Counter(), key: "persist.store", storage: .file(directory: directory.url), reducer: counterReducer)
        #expect(reopened.state == Counter(count: 1, name: "saved"))
    }

    @Test func aStoreWritesItsPendingStateWhenDeallocated() throws {
        let storage = InMemoryStorage().plain
        do {
            let store = Store(initialState: Counter(), key: "persist.storeDeinit", storage: storage, writes: .coalesced(window: .seconds(60)), reducer: counterReducer)
            store.dispatch(.set(9))
        }
        let data = try #require(try storage.load(key: "persist.storeDeinit"))
        #expect(try JSONDecoder().decode(Counter.self, from: data) == Counter(count: 9))
    }
}

@Suite("Persistence and re-entrancy", .serialized)
struct PersistenceReentrancyTests {
    @Test func aListenerOfStorageErrorsMayFlushAndChangeTheContainer() throws {
        let memory = InMemoryStorage()
        let storage = memory.plain
        let count = StateContainer(0, key: "persist.reentrant", storage: storage, writes: .writeThrough)
        let reports = Recorder<String>()
        let token = count.storageError?.observe { error in
            reports.append(error == nil ? "ok" : "failed")
            try? count.flush()           // waits for the writer: must not be called on it
            if error != nil { count.update { $0 += 100 } }
        }
        memory.inject(diskFull("persist.reentrant"), into: .save, .always)
        count.modify(1)
        memory.removeFaults()
        try count.flush()
        #expect(reports.elements.first == "failed")
        #expect(try storage.load(key: "persist.reentrant") == Data("\(count.value)".utf8))
        token?.cancel()
    }
}

@Suite("Changes made by others", .serialized)
struct ExternalChangeTests {
    @Test func aFileChangedByAnotherWriterReachesTheContainerAndItsListeners() async throws {
        let directory = TemporaryDirectory()
        let count = StateContainer(0, key: "external.file", storage: .file(directory: directory.url),
                                   externalChanges: .poll(every: .milliseconds(20)))
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        // Another process's write: another storage instance on the same directory.
        try FileStorage(directory: directory.url).save(Data("41".utf8), key: "external.file")
        #expect(await eventually { count.value == 41 && seen.elements.last == 41 })
        #expect(seen.elements == [41])
        // The container's own writes are not taken for outside changes.
        count.modify(42)
        try count.flush()
        try await Task.sleep(for: .milliseconds(100))
        #expect(seen.elements == [41, 42])
        token.cancel()
    }

    @Test func ignoringOutsideChangesNeverReloads() async throws {
        let directory = TemporaryDirectory()
        let count = StateContainer(0, key: "external.ignored", storage: .file(directory: directory.url),
                                   externalChanges: .ignore)
        try FileStorage(directory: directory.url).save(Data("7".utf8), key: "external.ignored")
        try await Task.sleep(for: .milliseconds(100))
        #expect(count.value == 0)
    }
}

@Suite("Stores following changes made by others", .serialized)
struct StoreExternalChangeTests {
    @Test func aStateStoredByAnotherWriterReachesTheSubscribersAndIsNotWrittenBack() async throws {
        let directory = TemporaryDirectory()
        let store = Store(initialState: Counter(), key: "external.store", storage: .file(directory: directory.url),
                          externalChanges: .poll(every: .milliseconds(20)), reducer: counterReducer)
        let seen = Recorder<Int>()
        let subscription = store.subscribe(\.count) { seen.append($0) }
        let other = FileStorage(directory: directory.url)
        try other.save(try JSONEncoder().encode(Counter(count: 5, name: "outside")), key: "external.store")
        let written = try other.fingerprint(key: "external.store")
        #expect(await eventually { store.state == Counter(count: 5, name: "outside") && seen.elements.last == 5 })
        #expect(seen.elements == [0, 5])
        try store.flush()
        #expect(try other.fingerprint(key: "external.store") == written)  // the file is the one the other wrote
        // Actions go on from the state that came from outside, and are saved.
        store.dispatch(.increment)
        try store.flush()
        #expect(try other.load(key: "external.store").map { try JSONDecoder().decode(Counter.self, from: $0) }
            == Counter(count: 6, name: "outside"))
        subscription.cancel()
    }

    @Test func ignoringOutsideChangesLeavesTheStoreAlone() async throws {
        let directory = TemporaryDirectory()
        let store = Store(initialState: Counter(), key: "external.storeIgnored", storage: .file(directory: directory.url),
                          externalChanges: .ignore, reducer: counterReducer)
        try FileStorage(directory: directory.url).save(try JSONEncoder().encode(Counter(count: 3)), key: "external.storeIgnored")
        try await Task.sleep(for: .milliseconds(100))
        #expect(store.state == Counter())
    }
}

@Suite("Telling own writes from others'", .serialized)
struct FingerprintTests {
    @Test func theFingerprintOfAFileSaveIsThatOfTheFileInPlace() throws {
        let directory = TemporaryDirectory()
        let storage = FileStorage(directory: directory.url)
        let first = try storage.saveReturningFingerprint(Data("1".utf8), key: "k")
        #expect(first == (try storage.fingerprint(key: "k")))
        let second = try storage.saveReturningFingerprint(Data("1".utf8), key: "k")
        #expect(second != first)  // the same bytes saved again are still a new save
        try storage.save(Data("2".utf8), key: "k")  // another writer
        #expect(try storage.fingerprint(key: "k") != second)
    }
}
