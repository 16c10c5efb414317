import Crypto
import Foundation
import Statehouse

/// Keeps each key's value sealed with authenticated encryption (AES-256-GCM), in a file of its own, in one directory.
///
/// ```swift
/// import StatehouseSecure
///
/// let key = try EncryptionKey.loadOrCreate(at: keyFileURL)
/// let token = StateContainer<String?>(nil, key: "apiToken", storage: EncryptedStorage(directory: url, key: key))
/// token.modify("s3cr3t")      // on disk: sealed bytes only
/// token.modify(nil)           // removes the file
/// ```
///
/// Every value is sealed with the key name bound in as associated data, so a value opens only under the name it was
/// saved under, with the encryption key it was sealed with, and exactly as it was written. The sealed bytes go to a
/// `FileStorage`, which writes atomically and durably (a crash leaves the old value or the new, never a torn one),
/// keeps keys from leaving the directory and creates files readable by their owner only. Values never appear in
/// plaintext on disk, and the storage's errors never contain them.
///
/// ## Sealed data that does not open
///
/// A file that was tampered with or truncated, copied from another key's file, or sealed with an encryption key this
/// storage was not given fails its authentication. ``load(key:)`` then keeps the bytes aside, under a key of their
/// own named after their SHA-256 (`<key>.unauthentic.<16 hex digits>`, so that different bytes never overwrite each
/// other), and throws a `StorageError` of kind `.authenticationFailed` whose `keptAside` names that key. A
/// container starts from its default, reports the error through `storageError`, and stays writable: the original
/// bytes are safe aside. They are kept as they were, still sealed: read them with a `FileStorage` on the same
/// directory, under the `keptAside` key. If they cannot be kept aside (`keptAside` is `nil`: a full disk, say), no
/// container writes over them: each write first tries again to keep them, and is refused with that error until it
/// can.
///
/// ## What it protects, and what it does not
///
/// Protected at rest: confidentiality (no value in plaintext on disk or in an error), integrity (a changed,
/// truncated or replaced byte is detected), and the binding of each value to its key name.
///
/// **Not detected: rollback.** Sealing proves a file was written by a holder of the key, for this key name, not that
/// it is the *latest* value. Someone who can write the directory can put back an older sealed file of the same key
/// (yesterday's copy, a backup): it opens, and a container loads or follows that older value as if another process
/// had stored it. A counter sealed into each value would not stop this soundly: the attacker rolls back the counter
/// with the file, and a process that starts after the rollback has nothing trusted to compare it with. Detecting
/// rollback needs monotonic state the attacker cannot rewind (a TPM counter, a server, a log kept elsewhere); where
/// that matters, keep such a version number in that trusted place and in the value, and compare them yourself.
/// Also not protected: a compromised process (it holds the key and the values), whoever can read the key file, and
/// the metadata the directory shows (key names, the values' lengths, when they change).
///
/// ## Rotating the encryption key
///
/// Give the new key as `key` and the old ones as `previousKeys`: values sealed with an old key still open, and each is
/// sealed with the new key the next time it is written. See <doc:RotatingTheKey>.
///
/// Several processes may share the directory: it is a `ChangeNotifyingStorage`, so containers follow the changes
/// other processes save within milliseconds, through the same directory watch as `FileStorage`.
public struct EncryptedStorage: ChangeNotifyingStorage {
    /// The directory holding the sealed files.
    public var directory: URL { files.directory }

    private let files: FileStorage
    /// The key that seals, then the keys that may still open older values.
    private let keys: [EncryptionKey]

    /// A storage that seals values with `key` and keeps them in files in `directory`.
    ///
    /// - Parameters:
    ///   - directory: Created on first save (owner-only permissions) if it does not exist. Keep it apart from the
    ///     key file.
    ///   - key: Seals every value written, and opens them.
    ///   - previousKeys: Keys values may still be sealed with, tried in order after `key` when a value is loaded;
    ///     during a key rotation, the old key.
    public init(directory: URL, key: EncryptionKey, previousKeys: [EncryptionKey] = []) {
        self.files = FileStorage(directory: directory)
        self.keys = [key] + previousKeys
    }

    /// The value stored under `key`, opened; `nil` if there is none.
    ///
    /// - Throws: `StorageError`: `.authenticationFailed` if the stored bytes do not open (see the discussion
    ///   above; `keptAside` says where they are), `.io` if the file cannot be read.
    public func load(key: String) throws(StorageError) -> Data? {
        guard let sealed = try fileOperation(.load, key, { try files.load(key: key) }) else { return nil }
        do {
            return try SealedValue.open(sealed, for: key, with: keys).0
        } catch {
            throw unauthentic(sealed, under: key, because: error)
        }
    }

    /// Seals `data` with the storage's key and stores it under `key`, atomically and durably.
    ///
    /// - Throws: `StorageError` of kind `.io` if the file cannot be written; the stored value is then unchanged.
    public func save(_ data: Data, key: String) throws(StorageError) {
        _ = try saveReturningFingerprint(data, key: key)
    }

    /// Removes the value stored under `key`; does nothing if there is none.
    public func remove(key: String) throws(StorageError) {
        try fileOperation(.remove, key) { try files.remove(key: key) }
    }

    /// Changes with every save and removal of `key`, by any process: the fingerprint of the key's file.
    public func fingerprint(key: String) throws(StorageError) -> StorageFingerprint {
        try fileOperation(.fingerprint, key) { try files.fingerprint(key: key) }
    }

    /// Calls `onChange` when the sealed file of `key` may have changed: `FileStorage`'s watch of the directory.
    ///
    /// - Throws: `StorageError` (operation `.watch`) if the directory cannot be made or watched.
    public func watchChanges(
        of key: String,
        _ onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> StorageWatch {
        try files.watchChanges(of: key, onChange)
    }

    /// Seals `data`, stores it under `key` and returns the fingerprint of exactly this save.
    public func saveReturningFingerprint(_ data: Data, key: String) throws(StorageError) -> StorageFingerprint {
        let sealed: Data
        do {
            sealed = try SealedValue.seal(data, for: key, with: keys[0])
        } catch {
            throw StorageError(.unencodable, key: key, operation: .save, message: """
                Could not seal the value of \(String(reflecting: key)): \(error). Nothing was written; the stored \
                value is unchanged.
                """, cause: error)
        }
        return try fileOperation(.save, key) { try files.saveReturningFingerprint(sealed, key: key) }
    }

    /// Keeps `sealed`, which did not open, under a key of its own, and returns the error that says where.
    private func unauthentic(_ sealed: Data, under key: String, because failure: SealedValue.OpenFailure) -> StorageError {
        let digest = SHA256.hash(data: sealed).prefix(8).map { String(format: "%02x", $0) }.joined()
        let asideKey = "\(key).unauthentic.\(digest)"
        let kept: String?
        let outcome: String
        do {
            try files.save(sealed, key: asideKey)
            kept = asideKey
            outcome = "its bytes were kept under \(String(reflecting: asideKey))"
        } catch {
            kept = nil
            outcome = "its bytes could not be kept aside (\(error)), so nothing may be written over them"
        }
        return StorageError(.authenticationFailed, key: key, operation: .load, message: """
            The sealed value of \(String(reflecting: key)) in \(directory.path) failed its authentication \
            (\(failure)): it was tampered with or truncated, copied from another key's file, or sealed with an \
            encryption key this storage was not given. None of it was used; \(outcome). If the \
            encryption key changed, pass the old one in previousKeys; otherwise restore the value from a copy you \
            trust.
            """, cause: failure, keptAside: kept)
    }

    /// Runs an operation of the file storage below, giving its errors this key and operation.
    private func fileOperation<Result>(
        _ operation: StorageError.Operation, _ key: String, _ body: () throws -> Result
    ) throws(StorageError) -> Result {
        do {
            return try body()
        } catch let error as StorageError {
            throw StorageError(
                error.kind, key: error.key ?? key, operation: error.operation ?? operation, message: error.message,
                cause: error.cause ?? error, keptAside: error.keptAside
            )
        } catch {
            throw StorageError(.io, key: key, operation: operation, message: """
                Could not \(operation.rawValue) the file of \(String(reflecting: key)) in \(directory.path): \(error). \
                Check the directory's permissions and free space.
                """, cause: error)
        }
    }
}
