import Foundation
import Synchronization
@testable import Statehouse

/// An in-memory storage that tells its own saves from others' exactly, and runs `transact` under the same lock as
/// every other access: a `TransactionalStorage` as SQLite or PostgreSQL would be, without their cost. The fingerprint
/// is a version number that every save, removal and transaction advances.
final class AttackMemoryStorage: TransactionalStorage {
    private struct Entries: Sendable {
        var data: [String: Data] = [:]
        var versions: [String: Int64] = [:]
        var clock: Int64 = 0

        mutating func store(_ newData: Data?, key: String) -> StorageFingerprint {
            clock += 1
            guard let newData else {
                data[key] = nil
                versions[key] = nil
                return .absent
            }
            data[key] = newData
            versions[key] = clock
            return StorageFingerprint([clock])
        }

        func fingerprint(key: String) -> StorageFingerprint {
            versions[key].map { StorageFingerprint([$0]) } ?? .absent
        }
    }

    private let entries = Locked(Entries())

    init() {}

    func load(key: String) throws -> Data? {
        entries.withLock { $0.data[key] }
    }

    func save(_ data: Data, key: String) throws {
        _ = entries.withLock { $0.store(data, key: key) }
    }

    func remove(key: String) throws {
        _ = entries.withLock { $0.store(nil, key: key) }
    }

    func fingerprint(key: String) throws -> StorageFingerprint {
        entries.withLock { $0.fingerprint(key: key) }
    }

    /// Exact (one critical section), so that another writer's save is never taken for this one.
    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        entries.withLock { $0.store(data, key: key) }
    }

    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        try entries.withLock { state in
            let newData = try transform(state.data[key])
            return state.store(newData, key: key)
        }
    }
}
