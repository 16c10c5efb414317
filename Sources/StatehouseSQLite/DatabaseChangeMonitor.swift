import Statehouse

/// Tells when anyone — this process or another — commits a change to a SQLite database.
///
/// GRDB's `ValueObservation` only sees writes made through the same connection pool, so it misses other processes.
/// The monitor watches the database's files instead (inotify on Linux, a kqueue source on Apple platforms), and
/// confirms each write the kernel reports with `PRAGMA data_version` on a connection of its own, which changes
/// whenever another connection commits, in whichever process. A commit reaches `onChange` within milliseconds;
/// several commits close together make one call or a few. A poll every `safetyNet` catches what watching cannot
/// see (a database on a network file system written from another machine).
///
/// ```swift
/// let monitor = try DatabaseChangeMonitor(path: path) {
///     store.dispatch(.reload)
/// }
/// ```
///
/// `onChange` is also called when the file at `path`, or its `-wal` or `-shm`, is removed or replaced: what the
/// process opened is no longer what the path names (check it there, if it matters). From then on the monitor
/// follows the database the path names now. (Replace a WAL database only once no connection has it open: a
/// connection opening the new file would take the old one's `-wal` for its own.) Where the files cannot be
/// watched (inotify's limits reached, a database this process cannot write to), the monitor polls four times a
/// second and says why through `StatehouseDiagnostics`. Every monitor, ``SQLiteStorage`` key and persisted
/// container on one database in a process shares one watch of it.
///
/// It stops when released: once released, `onChange` is not called again, nor still running on another thread
/// (unless the monitor is released from inside its own `onChange`, which does not wait for itself).
public final class DatabaseChangeMonitor: Sendable {
    private let subscription: StorageWatch
    private let polling: Task<Void, Never>

    /// Notes the database's current version and starts watching it: every change committed from now on is
    /// reported.
    ///
    /// - Parameters:
    ///   - path: An existing database.
    ///   - safetyNet: How often to look anyway.
    ///   - onChange: Called on a background thread after changes; return quickly, or hand the work on.
    /// - Throws: `StorageError` if the database does not exist or cannot be opened.
    public convenience init(
        path: String,
        safetyNet: Duration = .seconds(5),
        onChange: @escaping @Sendable () -> Void
    ) throws {
        try self.init(path: path, watching: true, every: safetyNet, clock: ContinuousClock(), onChange: onChange)
    }

    /// Notes the database's current version and looks every `interval` for a newer one, without watching its
    /// files: a commit reaches `onChange` within `interval` plus one read.
    ///
    /// - Parameters:
    ///   - path: An existing database.
    ///   - interval: How often to look.
    ///   - onChange: Called on a background thread after changes; return quickly, or hand the work on.
    /// - Throws: `StorageError` if the database does not exist or cannot be opened.
    public convenience init(path: String, every interval: Duration, onChange: @escaping @Sendable () -> Void) throws {
        try self.init(path: path, watching: false, every: interval, clock: ContinuousClock(), onChange: onChange)
    }

    /// `watching`: be told by the database's files, and poll every `interval` as the safety net; otherwise only
    /// poll. `clock` times the polls.
    init(
        path: String,
        watching: Bool,
        every interval: Duration,
        clock: any Clock<Duration>,
        onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) {
        let watch = watching ? try DatabaseWatch.shared(path: path) : try DatabaseWatch(path: path, pushing: false)
        var pollInterval = interval
        if watching, let reason = watch.pushUnavailable {
            pollInterval = min(interval, ExternalChanges.pollInterval)
            StatehouseDiagnostics.report(.watchingUnavailable(key: "", reason: reason, pollingEvery: pollInterval))
        }
        subscription = watch.subscribe(onChange)
        polling = Task.detached { [pollInterval] in
            while (try? await clock.sleep(for: pollInterval)) != nil {
                watch.check(waitingForWriter: false)
            }
        }
    }

    deinit {
        polling.cancel()
        subscription.cancel()
    }
}
