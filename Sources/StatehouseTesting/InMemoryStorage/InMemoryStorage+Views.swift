import Foundation
import Statehouse

extension InMemoryStorage {
    /// The same data, through a storage that detects changes and runs transactions but never notifies: persisted
    /// containers on it poll for outside changes, as they do on a storage that cannot watch (a network file system,
    /// a database without notifications). Faults, counts and outside changes of this storage apply to it.
    public var withoutNotifications: InMemoryStorageWithoutNotifications<C> {
        InMemoryStorageWithoutNotifications(storage: self)
    }

    /// The same data, through a storage with nothing but `load`, `save` and `remove`: persisted containers on it
    /// neither follow outside changes nor run transactions, as on a plain key-value store. Faults, counts and
    /// outside changes of this storage apply to it.
    public var plain: InMemoryStoragePlain<C> {
        InMemoryStoragePlain(storage: self)
    }
}

/// An ``InMemoryStorage`` that never notifies; see ``InMemoryStorage/withoutNotifications``.
public struct InMemoryStorageWithoutNotifications<C: Clock<Duration>>: TransactionalStorage {
    /// The storage whose data this is.
    public let storage: InMemoryStorage<C>

    public func load(key: String) throws -> Data? { try storage.load(key: key) }
    public func save(_ data: Data, key: String) throws { try storage.save(data, key: key) }
    public func remove(key: String) throws { try storage.remove(key: key) }
    public func fingerprint(key: String) throws -> StorageFingerprint { try storage.fingerprint(key: key) }

    public func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try storage.saveReturningFingerprint(data, key: key)
    }

    public func loadWithFingerprint(key: String) throws -> (data: Data?, fingerprint: StorageFingerprint) {
        try storage.loadWithFingerprint(key: key)
    }

    public func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        try storage.transact(key: key, transform)
    }

    public func outcomeIsUnknown(after error: StorageError) -> Bool {
        storage.outcomeIsUnknown(after: error)
    }
}

/// An ``InMemoryStorage`` with nothing but `load`, `save` and `remove`; see ``InMemoryStorage/plain``.
public struct InMemoryStoragePlain<C: Clock<Duration>>: StateStorage {
    /// The storage whose data this is.
    public let storage: InMemoryStorage<C>

    public func load(key: String) throws -> Data? { try storage.load(key: key) }
    public func save(_ data: Data, key: String) throws { try storage.save(data, key: key) }
    public func remove(key: String) throws { try storage.remove(key: key) }
}
