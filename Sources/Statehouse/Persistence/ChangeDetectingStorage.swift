import Foundation

/// A storage that can tell when a key's data was changed by someone else: another process, or another instance of
/// the storage.
///
/// Persisted containers on such a storage check the fingerprint of their key periodically, and reload and notify
/// their listeners when it changed; see ``ExternalChanges``.
public protocol ChangeDetectingStorage: StateStorage {
    /// A value that differs after any change of `key`'s data, by anyone: a save of other bytes, a removal. A save of
    /// the same bytes may keep it (a hash of the bytes is a fingerprint: the value to follow did not change). Must be
    /// cheap: containers ask for it at every notification and safety-net check.
    func fingerprint(key: String) throws -> StorageFingerprint

    /// Saves `data` under `key` and returns the fingerprint of exactly this save.
    ///
    /// Persisted containers use it to tell their own writes from others'. The default saves, then reads the
    /// fingerprint: a write by another process landing in between is then taken for this one (it shows with the next
    /// change). Storages that can read it as part of the save should implement this.
    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint

    /// Loads `key`'s data (`nil` if nothing is stored) together with the fingerprint of exactly that data.
    ///
    /// Persisted containers use it when they follow a change, so that the fingerprint they remember is that of the
    /// value they took. The default reads the fingerprint, then the data: a save landing in between is read with
    /// the older fingerprint, and read (and delivered) once more by the next check. Storages that can read both at
    /// once should implement this.
    func loadWithFingerprint(key: String) throws -> (data: Data?, fingerprint: StorageFingerprint)
}

extension ChangeDetectingStorage {
    public func loadWithFingerprint(key: String) throws -> (data: Data?, fingerprint: StorageFingerprint) {
        let fingerprint = try fingerprint(key: key)
        return (try load(key: key), fingerprint)
    }

    public func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try save(data, key: key)
        return try fingerprint(key: key)
    }
}

/// A storage that can read and rewrite a key as one transaction, atomic with respect to every other writer: other
/// instances of the storage and other processes.
///
/// On such a storage, a persisted container's `update` is such a transaction: it starts from the stored value (which
/// another process may have changed) and writes the result at once, so that two processes each incrementing a counter
/// 1,000 times end at exactly 2,000. `modify` and `~>` replace the value without reading it, and stay coalesced.
public protocol TransactionalStorage: ChangeDetectingStorage {
    /// Reads `key`'s data, passes it to `transform`, and stores what `transform` returns (`nil` removes the key), with
    /// no other writer changing the key in between.
    ///
    /// A container's `update` runs its body in `transform`, and runs the transaction again (body included) when it
    /// throws: throw only when nothing was stored, or say so with ``outcomeIsUnknown(after:)``.
    ///
    /// - Returns: The fingerprint of what the key holds after the transaction.
    /// - Throws: What `transform` throws (nothing is written then), or the storage's own error.
    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint

    /// Whether `error`, thrown by ``transact(key:_:)``, leaves it unknown whether the transaction's result was
    /// stored: its commit was sent, and the answer lost.
    ///
    /// A container's `update` whose transaction failed runs it again, which would apply the update twice if the
    /// first commit landed after all. After an error for which this says `true` it does not: the update is reported
    /// as failed, the container keeps its value, and its next check for outside changes reads the key again. The
    /// default says `false`: every error means that nothing was stored. A storage that can lose the answer of a
    /// commit should find out what happened (PostgreSQL's `pg_xact_status`) and say `true` only when it cannot.
    ///
    /// - Parameter error: What `transact` threw.
    func outcomeIsUnknown(after error: StorageError) -> Bool
}

extension TransactionalStorage {
    public func outcomeIsUnknown(after error: StorageError) -> Bool {
        false
    }
}

/// What a ``ChangeDetectingStorage`` says about a key's current data; compare two for equality.
public struct StorageFingerprint: Hashable, Sendable {
    let parts: [Int64]

    public init(_ parts: [Int64]) {
        self.parts = parts
    }

    /// The fingerprint of a key with nothing stored.
    public static let absent = StorageFingerprint([])

    /// A fingerprint of the bytes themselves (their count and a hash), for a storage that keeps no version of its
    /// own: equal bytes give equal fingerprints, whoever wrote them, so a save of the same value is no change.
    /// Compare it only within one process: the hash is seeded per process.
    ///
    /// - Parameter data: The key's bytes; `nil` when nothing is stored (``absent``).
    public static func ofContent(_ data: Data?) -> StorageFingerprint {
        guard let data else { return .absent }
        var hasher = Hasher()
        data.withUnsafeBytes { hasher.combine(bytes: $0) }
        return StorageFingerprint([Int64(data.count), Int64(hasher.finalize())])
    }
}
