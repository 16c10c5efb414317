import Dispatch
import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

private let garbage = Data("{not a number".utf8)

/// A transactional storage whose transactions fail before reaching the data and cannot tell whether the commit
/// landed (a connection lost while committing).
private struct UnknownOutcomes: TransactionalStorage {
    let base: InMemoryStorage<ContinuousClock>
    func load(key: String) throws -> Data? { try base.load(key: key) }
    func save(_ data: Data, key: String) throws { try base.save(data, key: key) }
    func remove(key: String) throws { try base.remove(key: key) }
    func fingerprint(key: String) throws -> StorageFingerprint { try base.fingerprint(key: key) }
    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try base.saveReturningFingerprint(data, key: key)
    }
    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        throw StorageError(.io, key: key, operation: .transact, message: "Connection lost while committing.")
    }
    func outcomeIsUnknown(after error: StorageError) -> Bool { true }
}

/// Bad data is not lost: bytes another process stored that do not decode are kept aside before this process's write
/// replaces them, also when this process does not know what the key last held (a value it read was refused, and its
/// fingerprint forgotten): a write then looks at the stored bytes before replacing them.
@Suite("Bad data stored outside is kept aside once before a write, also after a refused value", .serialized)
struct BadDataAfterARefusedValueTests {
    /// A container following `key` on a clock that never ticks (coalesced writes wait for `flush()`, only
    /// notifications check), with value 1 taken from outside already.
    private struct Follower {
        let storage = InMemoryStorage()
        let key: String
        let count: StateContainer<Int>
        let persistence: StatePersistence<Int>

        init(key: String) async throws {
            self.key = key
            count = StateContainer(
                0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(1)),
                externalChanges: .watch(safetyNet: .seconds(3600)), clock: ManualClock()
            )
            persistence = try #require(count.persistence as? StatePersistence<Int>)
            storage.changeOutside(key: key, to: jsonNumber(1))
            let container = count
            let tookTheFirstValue = await eventually { container.value == 1 }
            #expect(tookTheFirstValue)
        }

        func drainWriter() async {
            await withCheckedContinuation { continuation in persistence.writer.async { continuation.resume() } }
        }

        func drainApplier() async {
            await withCheckedContinuation { continuation in persistence.applier.async { continuation.resume() } }
        }

        /// The window: a check reads value 2 and hands it over; a local change (50) lands first, so value 2 is
        /// refused and its fingerprint forgotten. Then another process stores bytes that do not decode; the check it
        /// asks for skips the key (a local change is pending). Returns with 50 pending and those bytes stored.
        func refuseAValueThenFindGarbageStored() async {
            // Hold the applier: the next value a check hands over waits behind this block.
            let applierHeld = DispatchSemaphore(value: 0)
            let releaseApplier = DispatchSemaphore(value: 0)
            persistence.applier.async {
                applierHeld.signal()
                releaseApplier.wait()
            }
            #expect(await waitOffThePool(for: applierHeld))
            let loads = storage.callCount(of: .load)
            storage.changeOutside(key: key, to: jsonNumber(2))
            let storage = storage
            #expect(await eventually(timeout: .seconds(60)) { storage.callCount(of: .load) == loads + 1 })
            await drainWriter()

            // The local change, newer than value 2, lands before value 2 is handed over: it is refused.
            count.modify(50)
            releaseApplier.signal()
            await drainApplier()
            await drainWriter()
            #expect(count.value == 50)
            #expect(persistence.machine.withLock { $0.seen } == .forgotten, "value 2 was not refused")

            // Another process stores bytes that do not decode; no check reads them while 50 is pending.
            storage.changeOutside(key: key, to: garbage)
            await drainWriter()
        }

        /// The keys the bytes of `key` were kept aside under.
        var keptAside: [String] {
            storage.keys.filter { $0.hasPrefix("\(key).undecodable.") }
        }
    }

    /// After a refused value, the flush that writes 50 keeps the bytes another process stored since aside first.
    @Test func bytesStoredAfterARefusedValueAreKeptAsideBeforeTheWrite() async throws {
        let follower = try await Follower(key: "aside.after-refusal")
        let (storage, key, count) = (follower.storage, follower.key, follower.count)
        await follower.refuseAValueThenFindGarbageStored()

        try count.flush()

        #expect(storage.contents(of: key) == jsonNumber(50))
        let aside = follower.keptAside.first
        #expect(aside != nil, "the bytes stored outside were written over without a copy; keys: \(storage.keys)")
        if let aside { #expect(storage.contents(of: aside) == garbage) }
    }

    /// The same window, with the key's fingerprint failing to read once: not knowing it, the write still looks at
    /// the stored bytes.
    @Test func aFingerprintThatCannotBeReadDoesNotLetTheWriteSkipTheCopy() async throws {
        let follower = try await Follower(key: "aside.fingerprint-fails")
        let (storage, key, count) = (follower.storage, follower.key, follower.count)
        await follower.refuseAValueThenFindGarbageStored()
        storage.inject(.fail(), into: .fingerprint, .once, keys: .only(key))

        try count.flush()

        #expect(storage.faultCount(of: .fingerprint) == 1)
        #expect(storage.contents(of: key) == jsonNumber(50))
        #expect(follower.keptAside.count == 1, "keys: \(storage.keys)")
    }

    /// The same window, with the save failing once after the copy was kept: the retry keeps no second copy.
    @Test func aRetryAfterAFailedSaveKeepsNoSecondCopy() async throws {
        let follower = try await Follower(key: "aside.save-fails")
        let (storage, key, count) = (follower.storage, follower.key, follower.count)
        await follower.refuseAValueThenFindGarbageStored()
        storage.inject(.fail(), into: .save, .once, keys: .only(key))

        #expect(throws: StorageError.self) { try count.flush() }
        #expect(follower.keptAside.count == 1, "keys: \(storage.keys)")
        try count.flush()

        #expect(storage.contents(of: key) == jsonNumber(50))
        #expect(follower.keptAside.count == 1, "a second copy of the same bytes; keys: \(storage.keys)")
    }

    /// A container that does not follow its key knows no fingerprint until its first write: its load looked at the
    /// stored bytes, and kept bad ones aside then. Its first write keeps no second copy of them.
    @Test func aFirstWriteKeepsNoSecondCopyOfBytesTheLoadKeptAside() throws {
        let storage = InMemoryStorage()
        let key = "aside.load-kept"
        storage.changeOutside(key: key, to: garbage)
        let count = StateContainer(0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(1)),
            externalChanges: .ignore, clock: ManualClock())
        let keptAtLoad = storage.keys.filter { $0.hasPrefix("\(key).undecodable.") }
        #expect(keptAtLoad.count == 1, "keys: \(storage.keys)")

        count.modify(50)
        try count.flush()

        #expect(storage.contents(of: key) == jsonNumber(50))
        #expect(storage.keys.filter { $0.hasPrefix("\(key).undecodable.") } == keptAtLoad, "keys: \(storage.keys)")
    }

    /// After a transaction whose outcome is unknown (its transform saw the key's bytes), a write keeps no second
    /// copy of bytes the load kept aside.
    @Test func aWriteAfterAnUnknownOutcomeKeepsNoSecondCopyOfBytesTheLoadKeptAside() throws {
        let storage = InMemoryStorage()
        let key = "aside.unknown-outcome"
        storage.changeOutside(key: key, to: garbage)
        let count = StateContainer(
            0, key: key, storage: UnknownOutcomes(base: storage), codec: .json, writes: .coalesced(window: .seconds(1)),
            externalChanges: .ignore, clock: ManualClock()
        )
        let keptAtLoad = storage.keys.filter { $0.hasPrefix("\(key).undecodable.") }
        #expect(keptAtLoad.count == 1, "keys: \(storage.keys)")
        count.update { $0 += 1 }
        #expect(count.value == 0)

        count.modify(50)
        try count.flush()

        #expect(storage.contents(of: key) == jsonNumber(50))
        #expect(storage.keys.filter { $0.hasPrefix("\(key).undecodable.") } == keptAtLoad, "keys: \(storage.keys)")
    }

    /// Control: the same bytes, the same pending change, no refusal before: the write keeps them aside.
    @Test func bytesStoredWhileAChangeIsPendingAreKeptAsideBeforeTheWrite() async throws {
        let follower = try await Follower(key: "aside.no-refusal")
        let (storage, key, count) = (follower.storage, follower.key, follower.count)

        count.modify(50)
        storage.changeOutside(key: key, to: garbage)
        await follower.drainWriter()

        try count.flush()

        #expect(storage.contents(of: key) == jsonNumber(50))
        let aside = storage.keys.first { $0.hasPrefix("\(key).undecodable.") }
        #expect(aside != nil, "keys: \(storage.keys)")
        if let aside { #expect(storage.contents(of: aside) == garbage) }
    }
}
