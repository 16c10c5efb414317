/// The database as a sync server's authoritative copy: actions apps pushed, applied once each, and its contents as
/// a whole to send them.
extension TrackerDatabase {
    /// Applies `synced` unless this database applied it already (its id has a receipt, written in the same
    /// transaction), and returns the contents after. Blocks the calling thread.
    ///
    /// - Throws: The ``TrackerError`` the rules refuse it with (nothing is written), or
    ///   ``TrackerError/syncNeedsSQLite`` on PostgreSQL.
    func applySynced(_ synced: SyncedTrackerAction, until deadline: ContinuousClock.Instant) throws -> TrackerContents {
        guard let sqlite = backend as? SQLiteBackend else { throw TrackerError.syncNeedsSQLite }
        do {
            return try sqlite.writeBlocking(until: deadline) { sql in
                if try sql.value("SELECT 1 FROM syncReceipt WHERE id = ?", [.text(synced.id)]) == nil {
                    let action = try synced.resolved(in: try Self.contents(in: sql))
                    _ = try Self.applyAndLog(action, at: synced.logged.at, origin: synced.origin, in: sql)
                    let logged = try Self.newestLoggedAction(in: sql)
                    try sql.execute("INSERT INTO syncReceipt (id, logId) VALUES (?, ?)", [.text(synced.id), .integer(logged)])
                    // A receipt matters only until the sync server has committed the client's number after it (a
                    // moment later); the action log's window is far longer.
                    try sql.execute("DELETE FROM syncReceipt WHERE logId <= ?", [.integer(logged - Self.actionLogLimit)])
                }
                return try Self.contents(in: sql)
            }
        } catch let error as UniqueViolation {
            throw TrackerError.database(error.reason)
        }
    }

    /// The contents now, read in one transaction. Blocks the calling thread.
    func contents() throws(TrackerError) -> TrackerContents {
        try backend.read { sql in try Self.contents(in: sql) }
    }

    /// A copy's exchange with the store it follows, in one transaction that no other write runs beside: hands
    /// `send` the actions applied here since the logged action `cursor` (none when `cursor` is `nil`), and makes the
    /// database hold the contents `send` returns, logging no action. Writes nothing when it holds them already.
    ///
    /// - Returns: The newest logged action: the cursor of the next exchange.
    func exchange(
        after cursor: Int64?, until deadline: ContinuousClock.Instant,
        _ send: @escaping @Sendable ([LoggedEntry]) -> TrackerContents
    ) async throws -> Int64 {
        try await backend.write(until: deadline) { sql in
            guard let sql = sql as? GRDBStatements else { throw TrackerError.syncNeedsSQLite }
            let applied = try cursor.map { cursor in
                try Self.loggedActions(after: cursor, in: sql).map { LoggedEntry(id: $0.id, action: $0.action) }
            } ?? []
            let contents = send(applied)
            // Unchanged, nothing is written: a write would wake the database's watchers, which exchange again.
            if try Self.contents(in: sql) != contents {
                for table in ["activity", "project", "deletedActivity", "deletedProject", "undoStep"] {
                    try sql.execute("DELETE FROM \(table)")
                }
                try Self.insert(contents, in: sql)
            }
            return try Self.newestLoggedAction(in: sql)
        }
    }
}
