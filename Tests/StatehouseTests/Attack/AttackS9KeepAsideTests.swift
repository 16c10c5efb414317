import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// A transactional storage that can refuse every save under an aside key (as on a full disk or a read-only aside
/// place), and lists its keys.
private final class S9Storage: TransactionalStorage {
    struct NoRoom: Error {}
    let inner = AttackMemoryStorage()
    let refusesAside: Bool
    private let saved = Locked(Set<String>())

    init(refusesAside: Bool) {
        self.refusesAside = refusesAside
    }

    func keys() -> [String] { saved.withLock { Array($0) } }

    func load(key: String) throws -> Data? { try inner.load(key: key) }
    func save(_ data: Data, key: String) throws {
        guard !refusesAside || !key.contains(".undecodable.") else { throw NoRoom() }
        try inner.save(data, key: key)
        saved.withLock { _ = $0.insert(key) }
    }
    func remove(key: String) throws { try inner.remove(key: key) }
    func fingerprint(key: String) throws -> StorageFingerprint { try inner.fingerprint(key: key) }
    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        try inner.transact(key: key, transform)
    }
}

/// S9 attack: outside bytes that cannot be kept aside are never written over by a local write.
@Suite struct AttackS9KeepAsideTests {
    /// An `update` whose transaction found bytes it could not keep aside refused to write over them, and said
    /// "nothing is written over it until one is": a plain write afterwards (modify, then flush) must refuse too.
    @Test(arguments: [WritePolicy.writeThrough, .coalesced])
    func aWriteAfterAnUpdateRefusedForUnkeptBytesDoesNotOverwriteThem(writes: WritePolicy) throws {
        let storage = S9Storage(refusesAside: true)
        let key = "s9.aside.tx.\(writes)"
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
        let storage = S9Storage(refusesAside: false)
        let key = "s9.aside.window"
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
        let kept = storage.keys().filter { $0.hasPrefix("\(key).undecodable.") }
        #expect(kept.count == 1)
        #expect(try kept.first.flatMap { try storage.load(key: $0) } == garbage)
    }
}
