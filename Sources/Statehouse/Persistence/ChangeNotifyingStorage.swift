/// A ``ChangeDetectingStorage`` that says when a key may have changed, as it happens, so that the containers and
/// stores following it are told in milliseconds instead of at their next poll.
///
/// A file storage watches the file system (inotify on Linux, a kqueue source on Apple platforms); a database storage
/// listens to the database's own notifications. Followers still compare fingerprints before reading, so a
/// notification may be spurious (a change of another key in the same file, this process's own write); it must not
/// be missed, except in the cases the storage documents, which the followers' slow safety-net poll covers.
public protocol ChangeNotifyingStorage: ChangeDetectingStorage {
    /// Starts calling `onChange` whenever the data of `key` may have changed, by anyone.
    ///
    /// `onChange` is a hint, and may be called on the storage's own thread: it must return quickly, and queue the
    /// work of reading the key elsewhere (followers queue one fingerprint check, coalescing a burst of calls).
    ///
    /// - Parameters:
    ///   - key: The key to watch.
    ///   - onChange: Called whenever `key`'s data may have changed.
    /// - Returns: What stops the calls: cancel it, or let it go.
    /// - Throws: ``StorageError`` if the storage cannot watch now (no watch descriptors left, a lost connection);
    ///   followers then poll, and report the reason through ``StatehouseDiagnostics``.
    func watchChanges(
        of key: String,
        _ onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> StorageWatch
}

/// Stops a storage's change notifications when cancelled or released.
///
/// A storage makes one with what stops its notifications; ``cancel()`` runs that once, whoever calls it first.
/// A notification already on its way may still arrive just after: followers treat every notification as a hint.
public final class StorageWatch: Sendable {
    // `Locked` rather than `Mutex`: ThreadSanitizer cannot see `Mutex` on Linux (see `Locked`).
    private let stop: Locked<(@Sendable () -> Void)?>

    /// - Parameter stop: Ends the notifications; called once, by ``cancel()`` or at deinitialization.
    public init(stop: @escaping @Sendable () -> Void) {
        self.stop = Locked(stop)
    }

    /// Stops the notifications. Calling it again does nothing.
    public func cancel() {
        stop.withLock { stop in
            defer { stop = nil }
            return stop
        }?()
    }

    deinit {
        cancel()
    }
}
