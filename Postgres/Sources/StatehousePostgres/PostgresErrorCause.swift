import PostgresNIO

/// What postgres-nio reported, without the query it failed on: the cause of the `StorageError`s of
/// ``PostgresStorage`` and ``ReplicatedStore``.
///
/// postgres-nio's `PSQLError` keeps the failed query, whose bound parameters hold the stored value (or an action), and
/// `dump(error)` or a debugger shows their bytes. Errors are logged and reported far from where the value was
/// written, so the storage keeps only what explains the failure: the kind of error, the server's SQLSTATE and
/// message, and what happened to the connection.
public struct PostgresErrorCause: Error, Sendable, CustomStringConvertible {
    /// postgres-nio's error code (`PSQLError.Code`): `server` when PostgreSQL answered with an error, otherwise what
    /// happened to the connection (`connectionError`, `serverClosedConnection`, …).
    public let code: String
    /// The server's SQLSTATE (such as `40001`, `23514`), when PostgreSQL reported the error.
    public let sqlState: String?
    /// The server's severity (`ERROR`, `FATAL`, …), when PostgreSQL reported the error.
    public let severity: String?
    /// The server's primary message, when PostgreSQL reported the error. (Its detail line, which may quote data, is
    /// left out.)
    public let serverMessage: String?
    /// The error underneath, described: a lost connection's, for instance.
    public let underlying: String?

    init(_ error: PSQLError) {
        code = "\(error.code)"
        sqlState = error.serverInfo?[.sqlState]
        severity = error.serverInfo?[.severity]
        serverMessage = error.serverInfo?[.message]
        underlying = error.underlying.map { "\($0)" }
    }

    public var description: String {
        var parts = ["postgres-nio error \(code)"]
        if let sqlState { parts.append("SQLSTATE \(sqlState)") }
        if let severity, let serverMessage { parts.append("\(severity): \(serverMessage)") }
        if let underlying { parts.append("underlying: \(underlying)") }
        return parts.joined(separator: ", ")
    }

    /// `error` fit to be a `StorageError`'s cause: a `PSQLError` without its query, any other error as it is.
    static func redacting(_ error: any Error) -> any Error {
        (error as? PSQLError).map(PostgresErrorCause.init) ?? error
    }
}
