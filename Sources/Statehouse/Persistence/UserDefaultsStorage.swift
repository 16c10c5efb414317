import Foundation

/// Keeps state in a `UserDefaults` suite.
///
/// Every save and removal is followed by `synchronize()`, without which Foundation on Linux keeps changes in memory
/// only. The suite is always named: the default, `"Statehouse"`, does not depend on the executable's name (as
/// `UserDefaults.standard` does on Linux). On Linux a suite is the file `~/.config/<suiteName>.plist`.
public final class UserDefaultsStorage: StateStorage {
    /// The suite's name.
    public let suiteName: String
    // `UserDefaults` is documented as thread-safe, but not marked `Sendable` on every platform.
    nonisolated(unsafe) let defaults: UserDefaults

    /// - Parameter suiteName: The suite to use; not `UserDefaults.globalDomain` or the app's own domain.
    public init(suiteName: String = "Statehouse") {
        self.suiteName = suiteName
        // `UserDefaults(suiteName:)` returns nil only for the global domain and the app's own identifier.
        self.defaults = UserDefaults(suiteName: suiteName) ?? .standard
    }

    public func load(key: String) throws -> Data? {
        defaults.data(forKey: key)
    }

    public func save(_ data: Data, key: String) throws {
        defaults.set(data, forKey: key)
        try synchronize(key, after: .save)
    }

    public func remove(key: String) throws {
        defaults.removeObject(forKey: key)
        try synchronize(key, after: .remove)
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
