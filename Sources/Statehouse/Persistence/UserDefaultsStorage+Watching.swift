#if canImport(Glibc)
import Foundation

/// On Linux a suite is a property list file of its own, which other processes write and which can be watched. (On
/// Apple platforms the preferences daemon holds the truth and writes the file when it likes: there the storage
/// follows nothing.)
extension UserDefaultsStorage: ChangeNotifyingStorage {
    /// A hash of `key`'s bytes, read after `synchronize()`, which picks up what other processes wrote to the suite's
    /// file (without it, Foundation on Linux keeps what it read first). Equal bytes give equal fingerprints: a save
    /// of the same value by another process is no change.
    public func fingerprint(key: String) throws -> StorageFingerprint {
        _ = defaults.synchronize()
        return .ofContent(storedData(forKey: key))
    }

    /// Watches the suite's file, ``suiteFile``: any save to the suite, by this process or another, may have changed
    /// `key` (followers compare its fingerprint).
    ///
    /// - Throws: ``StorageError`` (operation ``StorageError/Operation/watch``) if the file's directory cannot be
    ///   made or watched.
    public func watchChanges(
        of key: String,
        _ onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> StorageWatch {
        let directory = suiteFile.deletingLastPathComponent()
        return try StorageError.catching(key: key, operation: .watch, in: directory.path) {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700]
            )
            return try FileWatcher.shared.watch(
                directory: directory.path, names: [suiteFile.lastPathComponent], onChange: onChange
            )
        }
    }

    /// The file the suite lives in: `$XDG_CONFIG_HOME/<suiteName>.plist`, or `~/.config/<suiteName>.plist` when
    /// `XDG_CONFIG_HOME` is unset or not absolute.
    public var suiteFile: URL {
        let configuration: URL
        if let configured = ProcessInfo.processInfo.environment["XDG_CONFIG_HOME"], configured.hasPrefix("/") {
            configuration = URL(fileURLWithPath: configured, isDirectory: true)
        } else {
            configuration = FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".config", isDirectory: true)
        }
        return configuration.appendingPathComponent("\(suiteName).plist")
    }
}
#endif
