import PostgresNIO
import _ConnectionPoolModule

/// What an error from postgres-nio means for an operation: worth another try on a new connection, or final.
enum PostgresFailure {
    /// The connection went away or could not be made, or the server asked to try again: an operation that failed so
    /// has not taken effect (or, for a commit, may have: see ``Transaction``), and may run again.
    static func isTransient(_ error: any Error) -> Bool {
        if let error = error as? PSQLError {
            switch error.code {
            case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown:
                return true
            case .server:
                return error.serverInfo?[.sqlState].map(isTransient(sqlState:)) ?? false
            case .listenFailed:
                // postgres-nio gives a failed LISTEN this code whatever the cause: without the server's answer, the
                // connection was lost.
                return error.serverInfo?[.sqlState].map(isTransient(sqlState:)) ?? true
            default:
                return false
            }
        }
        // The pool could not connect for a while (the server is down or restarting); it keeps trying.
        return error as? ConnectionPoolError == .connectionCreationCircuitBreakerTripped || error is StillInProgress
            || error is ClosedBeforeSending
    }

    /// Whether the client has shut down (its `run()` ended): it cannot lease a connection again.
    static func isShutDown(_ error: any Error) -> Bool {
        (error as? PSQLError)?.code == .poolClosed || error as? ConnectionPoolError == .poolShutdown
    }

    /// The leased connection had closed before a statement was sent on it: nothing was sent, and the pool will drop
    /// the connection.
    struct ClosedBeforeSending: Error {}

    /// A transaction whose connection was lost still shows as in progress: ask again in a moment.
    struct StillInProgress: Error {}

    /// The cause of a transaction's error when its commit may have landed: it was sent, and neither its answer nor
    /// the server's record of it (`pg_xact_status`) could be had in time. Never transient: running the transaction
    /// again could store its result twice. ``PostgresStorage/outcomeIsUnknown(after:)`` looks for it.
    struct OutcomeUnknown: Error {
        /// Why the outcome could not be found out, if an error said so.
        let underlying: (any Error)?
    }

    /// Whether the connection that failed with `error` is still there: any error but a lost connection, or a
    /// server error that ended the session (FATAL, such as `pg_terminate_backend`'s).
    static func leavesConnectionOpen(_ error: any Error) -> Bool {
        if error is ClosedBeforeSending { return false }
        guard let error = error as? PSQLError else { return true }
        switch error.code {
        case .server:
            return error.serverInfo?[.severity] != "FATAL" && error.serverInfo?[.severity] != "PANIC"
        case .serverClosedConnection, .clientClosedConnection, .connectionError, .uncleanShutdown:
            return false
        default:
            return true
        }
    }

    /// Connection exceptions (class 08), the server shutting down or starting (57P01–57P03), a session ended for
    /// waiting on its client longer than `idle_session_timeout` (57P05: it was idle outside any transaction, so a
    /// statement that meets this error never ran), and a serialization failure or deadlock (40001, 40P01), which
    /// PostgreSQL asks clients to retry.
    private static func isTransient(sqlState: String) -> Bool {
        sqlState.hasPrefix("08") || ["57P01", "57P02", "57P03", "57P05", "40001", "40P01"].contains(sqlState)
    }

    /// A short account of `error` for a message: the server's SQLSTATE and message, or what happened to the
    /// connection. Never the query's parameters (which hold the value).
    static func describe(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if error.code == .server, let info = error.serverInfo {
                return "PostgreSQL error \(info[.sqlState] ?? "?"): \(info[.message] ?? "no message")"
            }
            if error.code == .poolClosed {
                return "the PostgresClient has shut down (its run() ended)"
            }
            return "postgres-nio error \(error.code)"
        }
        if error is ClosedBeforeSending {
            return "the connection had closed before the statement was sent"
        }
        if error as? ConnectionPoolError == .poolShutdown {
            return "the PostgresClient has shut down (its run() ended)"
        }
        if error as? ConnectionPoolError == .connectionCreationCircuitBreakerTripped {
            return "the PostgresClient could not connect to the server"
        }
        return "\(error)"
    }
}
