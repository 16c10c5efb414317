import Foundation
@testable import Statehouse

/// A transactional storage in memory, with a version per key, and nothing else: `transact` runs under its lock.
final class MinimalTransactionalStorage: TransactionalStorage, Sendable {
    private let data = Locked<[String: (Data, Int64)]>([:])
    func load(key: String) throws -> Data? { data.withLock { $0[key]?.0 } }
    func save(_ value: Data, key: String) throws { data.withLock { $0[key] = (value, ($0[key]?.1 ?? 0) + 1) } }
    func remove(key: String) throws { _ = data.withLock { $0.removeValue(forKey: key) } }
    func fingerprint(key: String) throws -> StorageFingerprint {
        data.withLock { $0[key].map { StorageFingerprint([$0.1]) } ?? .absent }
    }
    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        try data.withLock { table in
            let new = try transform(table[key]?.0)
            if let new { table[key] = (new, (table[key]?.1 ?? 0) + 1) } else { table[key] = nil }
            return table[key].map { StorageFingerprint([$0.1]) } ?? .absent
        }
    }
}

