import PostgresNIO

/// Whether a loop that retries every failure (following a log, listening for changes) should tell of this one.
///
/// A lost connection, a server going away, a session the server ended (`pg_terminate_backend`, `idle_session_timeout`:
/// see ``PostgresFailure/isTransient(_:)``), a lock or statement timeout is expected and mended by retrying, so it is
/// never told. A refusal that retrying does not mend (a table changed by hand, a privilege revoked, the client shut
/// down) is told once, until the loop works again: retried every 2 s, it would otherwise be told 1,800 times an hour.
struct RefusalReport {
    private var isTold = false

    /// Whether `error` is a refusal to tell now (and from then on, not again until ``ended()``).
    mutating func isNews(_ error: any Error) -> Bool {
        guard !isTold, Self.isRefusal(error) else { return false }
        isTold = true
        return true
    }

    /// The loop works again: the next refusal is news.
    mutating func ended() {
        isTold = false
    }

    private static func isRefusal(_ error: any Error) -> Bool {
        if PostgresFailure.isTransient(error) || error is TimedOut { return false }
        let sqlState = (error as? PSQLError)?.serverInfo?[.sqlState]
        // lock_not_available (lock_timeout) and query_canceled (statement_timeout): another session was in the way.
        return sqlState != "55P03" && sqlState != "57014"
    }
}
