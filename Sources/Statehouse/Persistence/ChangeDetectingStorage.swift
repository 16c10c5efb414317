/// A storage that can tell when a key's data was changed by someone else: another process, or another instance of
/// the storage.
///
/// Persisted containers on such a storage check the fingerprint of their key periodically, and reload and notify
/// their listeners when it changed; see ``ExternalChanges``.
public protocol ChangeDetectingStorage: StateStorage {
    /// A value that differs after any save or removal of `key`, by anyone. Must be cheap: containers ask for it
    /// several times a second.
    func fingerprint(key: String) throws -> StorageFingerprint
}

/// What a ``ChangeDetectingStorage`` says about a key's current data; compare two for equality.
public struct StorageFingerprint: Hashable, Sendable {
    let parts: [Int64]

    public init(_ parts: [Int64]) {
        self.parts = parts
    }

    /// The fingerprint of a key with nothing stored.
    public static let absent = StorageFingerprint([])
}

/// Whether a persisted container follows changes that others make to its stored data.
public enum ExternalChanges: Sendable, Equatable {
    /// Check every `interval`: a change made by another process reaches the container's listeners within about
    /// `interval` plus one read. Local changes not yet written win over outside ones.
    case poll(every: Duration)
    /// Never reload.
    case ignore

    /// Check four times a second.
    public static let poll = ExternalChanges.poll(every: .milliseconds(250))
}
