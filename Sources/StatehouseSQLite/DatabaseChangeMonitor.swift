import GRDB

/// Tells when anyone — this process or another — commits a change to a SQLite database.
///
/// GRDB's `ValueObservation` only sees writes made through the same connection pool, so it misses other processes.
/// SQLite's `PRAGMA data_version`, read on a connection of its own, changes whenever another connection commits,
/// in whichever process. The monitor reads it every `interval`: a commit reaches `onChange` within `interval` plus
/// one read; several commits between two reads make one call.
///
/// ```swift
/// let monitor = try DatabaseChangeMonitor(path: path, every: .milliseconds(250)) {
///     store.dispatch(.reload)
/// }
/// ```
///
/// It stops when released.
public final class DatabaseChangeMonitor: Sendable {
    private let polling: Task<Void, Never>

    /// Opens the monitor's own read-only connection, notes the current version, and starts watching: every change
    /// committed from now on is reported.
    ///
    /// - Parameters:
    ///   - path: An existing database.
    ///   - interval: How often to look.
    ///   - onChange: Called on a background task after changes.
    public init(path: String, every interval: Duration, onChange: @escaping @Sendable () -> Void) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        let connection = try DatabaseQueue(path: path, configuration: configuration)
        let baseline = try connection.read(Self.version)
        polling = Task.detached {
            var known = baseline
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                // A failed read (the database briefly locked) is retried at the next tick.
                guard let version = try? await connection.read(Self.version), version != known else { continue }
                known = version
                onChange()
            }
        }
    }

    deinit {
        polling.cancel()
    }

    private static func version(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "PRAGMA data_version") ?? 0
    }
}
