import Dispatch
import Foundation
import StatehouseTesting
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Stored bytes that do not decode are kept aside before anything is written over them, also by an `update` that runs
/// as a transaction, and never written over while they cannot be kept aside.
@Suite("Bad data is not fatal and not lost: bytes that do not decode are never written over")
struct BadDataTests {
    /// An `update` whose transaction found bytes it could not keep aside refused to write over them, and said
    /// "nothing is written over it until one is": a plain write afterwards (modify, then flush) must refuse too.
    @Test(arguments: [WritePolicy.writeThrough, .coalesced])
    func aWriteAfterAnUpdateRefusedForUnkeptBytesDoesNotOverwriteThem(writes: WritePolicy) throws {
        let memory = InMemoryStorage()
        // No room for kept-aside bytes: a full disk, or a read-only place for them.
        memory.inject(.fail(), into: .save, .always, keys: .keptAside)
        let storage = memory.withoutNotifications
        let key = "badData.aside.tx.\(writes)"
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: writes, externalChanges: .ignore,
            clock: ManualClock()
        )
        let garbage = Data("not a number".utf8)
        try storage.save(garbage, key: key)  // another process
        count.update { $0 += 1 }
        #expect(count.value == 0)
        #expect(count.storageError?.value?.kind == .undecodable)
        count.modify(5)
        #expect(throws: StorageError.self) { try count.flush() }
        #expect(try storage.load(key: key) == garbage)
        // Once the bytes can be kept aside (here: once the key holds a value again), writes go on.
        try storage.save(Data("7".utf8), key: key)
        try count.flush()
        #expect(try storage.load(key: key) == Data("5".utf8))
    }

    /// Bad bytes another process stores while a local change waits for its coalesced write: the check for outside
    /// changes skips the key while a local change is pending, so nothing has looked at them when the write comes.
    /// They are not a value this process could have read, and keeping them aside costs nothing here: they must not
    /// be lost.
    @Test func badBytesStoredDuringTheCoalescingWindowAreKeptAsideBeforeTheWrite() throws {
        let memory = InMemoryStorage()
        let storage = memory.withoutNotifications
        let key = "badData.aside.window"
        let clock = ManualClock()
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(1)),
            externalChanges: .poll(every: .milliseconds(1)), clock: clock
        )
        count.modify(1)  // pending until the window ends (the manual clock never moves) or a flush
        let garbage = Data("tampered".utf8)
        try storage.save(garbage, key: key)  // another process
        try count.flush()
        #expect(try storage.load(key: key) == Data("1".utf8))
        let kept = memory.keys.filter { $0.hasPrefix("\(key).undecodable.") }
        #expect(kept.count == 1)
        #expect(try kept.first.flatMap { try storage.load(key: $0) } == garbage)
    }

    /// Another version of the program stored bytes this one cannot decode, and nothing followed the key: the
    /// transaction does not take them for "nothing stored". It keeps them aside, reports them (without their
    /// content), then writes the update.
    @Test func anUpdateInATransactionKeepsBytesThatDoNotDecodeAsideBeforeWritingOverThem() throws {
        let storage = InMemoryStorage().withoutNotifications
        let key = "transaction.undecodable"
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .writeThrough, externalChanges: .ignore,
            clock: ManualClock()
        )
        let alien = Data("not a number".utf8)
        try storage.save(alien, key: key)  // another process, a newer format
        count.update { $0 += 1 }
        #expect(count.value == 1)
        #expect(try storage.load(key: key) == Data("1".utf8))
        let error = try #require(count.storageError?.value)
        #expect(error.kind == .undecodable)
        #expect(error.key == key)
        #expect(!error.message.contains("not a number"))
        let kept = try #require(error.keptAside)
        #expect(try storage.load(key: kept) == alien)
    }
}
