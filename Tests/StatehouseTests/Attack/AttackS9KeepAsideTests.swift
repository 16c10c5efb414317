import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// A transactional storage where nothing can be kept aside: every save under an aside key fails, as on a full disk
/// or a read-only aside place.
private final class AsideRefusingStorage: TransactionalStorage {
    struct NoRoom: Error {}
    let inner = AttackMemoryStorage()

    func load(key: String) throws -> Data? { try inner.load(key: key) }
    func save(_ data: Data, key: String) throws {
        guard !key.contains(".undecodable.") else { throw NoRoom() }
        try inner.save(data, key: key)
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
        let storage = AsideRefusingStorage()
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
}
