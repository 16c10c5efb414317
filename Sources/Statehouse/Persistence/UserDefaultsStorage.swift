import Foundation

/// Keeps state in a `UserDefaults` suite.
///
/// Every save and removal is followed by `synchronize()`, without which Foundation on Linux keeps changes in memory
/// only. The suite is always named: the default, `"Statehouse"`, does not depend on the executable's name (as
/// `UserDefaults.standard` does on Linux). On Linux a suite is the file `~/.config/<suiteName>.plist`.
///
/// Keys Swift calls equal are one entry: a key is kept in Unicode canonical composition (NFC), so that `"café"`
/// typed precomposed or decomposed loads, replaces and removes the same value (`UserDefaults` itself reads a key
/// code unit by code unit, and on Linux removes it as Swift compares strings). Values saved under a decomposed key before keys were composed are still read, and move
/// to the composed key at the next save.
public final class UserDefaultsStorage: StateStorage {
    /// The suite's name.
    public let suiteName: String
    // Safe to share: `UserDefaults` is documented as thread-safe (every call here is one of its own, which lock
    // internally), but not marked `Sendable` on every platform; the reference itself never changes. Internal, not
    // private, for the watching extension in the file beside this one, which only calls `synchronize()`.
    nonisolated(unsafe) let defaults: UserDefaults

    /// - Parameter suiteName: The suite to use; not `UserDefaults.globalDomain` or the app's own domain.
    public init(suiteName: String = "Statehouse") {
        self.suiteName = suiteName
        // `UserDefaults(suiteName:)` returns nil only for the global domain and the app's own identifier.
        self.defaults = UserDefaults(suiteName: suiteName) ?? .standard
    }

    public func load(key: String) throws -> Data? {
        storedData(forKey: key)
    }

    public func save(_ data: Data, key: String) throws {
        try removeLegacyEntry(of: key, during: .save)
        defaults.set(data, forKey: StorageKey.canonical(key))
        try synchronize(key, after: .save)
    }

    public func remove(key: String) throws {
        defaults.removeObject(forKey: StorageKey.canonical(key))
        try synchronize(key, after: .remove)
        try removeLegacyEntry(of: key, during: .remove)
    }

    /// What `key` holds: under its composition, or else where it was saved before keys were composed.
    func storedData(forKey key: String) -> Data? {
        defaults.data(forKey: StorageKey.canonical(key)) ?? StorageKey.legacy(key).flatMap(defaults.data(forKey:))
    }

    /// Removes what `key` holds from before keys were composed, if anything, and writes that to disk on its own.
    ///
    /// On its own, because Foundation on Linux matches keys as Swift compares them when it writes changes to the
    /// suite's file: a removal of the decomposed key and a save of the composed one, written together, leave the new
    /// value under the old, decomposed key. A save removes the old entry first for the same reason.
    private func removeLegacyEntry(of key: String, during operation: StorageError.Operation) throws {
        guard let legacy = StorageKey.legacy(key), defaults.object(forKey: legacy) != nil else { return }
        defaults.removeObject(forKey: legacy)
        try synchronize(key, after: operation)
    }

    private func synchronize(_ key: String, after operation: StorageError.Operation) throws {
        guard defaults.synchronize() else {
            throw StorageError(.io, key: key, operation: operation, message: """
                UserDefaults could not write the suite \(String(reflecting: suiteName)) to disk: check that its \
                directory (~/.config on Linux) exists and is writable.
                """)
        }
    }
}

extension StateStorage where Self == UserDefaultsStorage {
    /// A storage in the `UserDefaults` suite `suiteName` (by default `"Statehouse"`).
    public static func userDefaults(suiteName: String = "Statehouse") -> UserDefaultsStorage {
        UserDefaultsStorage(suiteName: suiteName)
    }
}
