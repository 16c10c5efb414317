import Foundation

extension FileStorage: ChangeNotifyingStorage {
    /// Watches the storage's directory for what a save of `key` does: a new file renamed over the key's file. A
    /// removal, a file deleted and made again, and a writer that rewrites the file in place are seen too.
    ///
    /// The directory is watched once per process, however many keys, containers and stores follow files in it (on
    /// Linux with inotify, on Apple platforms with a kqueue source), and is created (owner-only) if it does not exist
    /// yet, as the first save would. A directory removed or moved away is watched again once it is made again (its
    /// parents are watched meanwhile). What cannot be seen: a change made on another machine of a network file
    /// system; the followers' safety-net poll notices it.
    ///
    /// - Throws: ``StorageError`` (operation ``StorageError/Operation/watch``) if the directory cannot be made or
    ///   watched, for instance when the user's inotify watches are used up.
    public func watchChanges(
        of key: String,
        _ onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> StorageWatch {
        try StorageError.catching(key: key, operation: .watch, in: directory.path) {
            try createDirectoryIfNeeded()
            return try FileWatcher.shared.watch(directory: directory.path, names: Self.fileNames(for: key), onChange: onChange)
        }
    }
}
