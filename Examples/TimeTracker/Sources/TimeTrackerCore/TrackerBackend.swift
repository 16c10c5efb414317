/// Where the tracker's tables live: SQLite through GRDB (``SQLiteBackend``) or PostgreSQL through postgres-nio
/// (``PostgresBackend``). Each gives transactions, reads and word of changes; ``TrackerDatabase`` holds the rules and
/// the actions, written once for both.
protocol TrackerBackend: Sendable {
    /// The database as people see it in messages: a path, or a URL without its password.
    var location: String { get }

    /// Runs `body` in one transaction that no other writer, in any process, runs beside: all of it or nothing.
    ///
    /// - Parameter deadline: The latest time to get the write lock by (waiting for another program's transaction);
    ///   past it, nothing is written and this throws ``TrackerError/databaseLocked(waited:)``.
    /// - Throws: What `body` threw; ``UniqueViolation`` when a unique index refused a row; otherwise a
    ///   ``TrackerError``, whose message holds no SQL and no password.
    func write<Result: Sendable>(
        until deadline: ContinuousClock.Instant, _ body: @escaping @Sendable (any SQLStatements) throws -> Result
    ) async throws -> Result

    /// Runs `body`'s reads, which see one consistent state. Blocks the calling thread: call it off Swift's
    /// cooperative pool.
    func read<Result>(_ body: (any SQLStatements) throws -> Result) throws(TrackerError) -> Result

    /// Starts calling `changed` after every commit to the tables, by any process (and once when a watch begins or
    /// begins again, so that nothing between is missed), and `lost` if the database can no longer be used.
    ///
    /// - Returns: What keeps the watch going: it stops when this is released.
    func watch(
        changed: @escaping @Sendable () -> Void, lost: @escaping @Sendable (TrackerError) -> Void
    ) throws(TrackerError) -> any Sendable
}

/// A unique index refused a row another writer had just added (a name, a running activity).
struct UniqueViolation: Error {
    /// The database's words, without SQL.
    let reason: String
}
