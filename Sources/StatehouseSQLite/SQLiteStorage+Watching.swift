import Statehouse

extension SQLiteStorage: ChangeNotifyingStorage {
    /// Calls `onChange` after every commit to the database by another connection — of this process or another —
    /// that `PRAGMA data_version` confirms; the followers then compare `key`'s row revision, so a commit that did
    /// not touch `key` costs them one read.
    ///
    /// The database is watched once per process, however many keys, containers, stores and
    /// ``DatabaseChangeMonitor``s follow it: its `-wal` file (where WAL commits go), the database file (checkpoints,
    /// rollback-journal commits) and their names (a file removed or replaced), in the directory that holds them.
    ///
    /// - Throws: `StorageError` (operation `.open`) if the database could not be opened, or (operation
    ///   `.watch`) if its files cannot be watched: inotify's limits reached, or a database this process cannot
    ///   write to (confirming a commit as it happens waits for the writer's lock).
    public func watchChanges(
        of key: String,
        _ onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> StorageWatch {
        _ = try openDatabase()
        let watch = try DatabaseWatch.shared(path: path)
        if let reason = watch.pushUnavailable {
            throw StorageError(
                .io, key: key, operation: .watch, message: "Could not watch the SQLite database at \(path): \(reason)."
            )
        }
        return watch.subscribe(onChange)
    }
}
