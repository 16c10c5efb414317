import Foundation
@testable import Statehouse

/// A transactional storage that can refuse every save under an aside key (as on a full disk or a read-only aside
/// place), and lists its keys.
final class AsideRefusingStorage: TransactionalStorage {
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

