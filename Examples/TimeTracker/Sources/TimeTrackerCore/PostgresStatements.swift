#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Logging
import PostgresNIO

/// Statements on PostgreSQL, each blocking its thread until the server answers (see ``waitFor(timeout:_:)``).
struct PostgresStatements: SQLStatements {
    /// Runs one query: on a leased connection inside a transaction, or on any of the client's for a lone read.
    let run: @Sendable (PostgresQuery) async throws -> [[SQLValue]]
    let timeout: Duration

    var binaryCollation: String { " COLLATE \"C\"" }

    /// The identity's sequence; `NULL` before it gave its first id.
    func lastGeneratedID(in table: String) throws -> Int64 {
        try value(
            "SELECT COALESCE(pg_sequence_last_value(pg_get_serial_sequence(?, 'id')::regclass), 0)", [.text(table)]
        )?.integer ?? 0
    }

    func rows(_ sql: String, _ arguments: [SQLValue]) throws -> [[SQLValue]] {
        let query = Self.query(sql, arguments)
        return try waitFor(timeout: timeout) { [run] in try await run(query) }
    }

    /// `sql` with its `?` numbered as PostgreSQL's `$1`, `$2`… (timetrack's SQL has no `?` inside a string).
    static func query(_ sql: String, _ arguments: [SQLValue]) -> PostgresQuery {
        var numbered = ""
        var count = 0
        for character in sql {
            if character == "?" {
                count += 1
                numbered += "$\(count)"
            } else {
                numbered.append(character)
            }
        }
        var bindings = PostgresBindings(capacity: arguments.count)
        for argument in arguments {
            switch argument {
            case .integer(let value): bindings.append(value)
            case .real(let value): bindings.append(value)
            case .text(let value): bindings.append(value)
            case .null: bindings.appendNull()
            }
        }
        return PostgresQuery(unsafeSQL: numbered, binds: bindings)
    }

    /// Every row of `query`'s result on `connection`, each column as the value it holds.
    ///
    /// Read through postgres-nio's future-based `query`, which collects the rows on the connection's event loop,
    /// never as an async sequence: postgres-nio 1.33.2 stops the process (a `preconditionFailure` in
    /// `RowStreamStateMachine`) when a connection closes while a streamed result waits for its consumer, as when
    /// the server restarts in the middle of a read.
    ///
    /// A statement given up on (``waitFor(timeout:_:)`` cancels its task when its time is up) closes its
    /// connection: the statement may still be running, inside the connection's transaction, and a connection
    /// handed back to the pool so would give the next lease that open transaction (whose `COMMIT` would land the
    /// action reported failed, and whose write lock would keep every other writer out meanwhile). Closed, its
    /// transaction is rolled back by the server, and nothing else runs on it.
    static func values(
        of query: PostgresQuery, on connection: PostgresConnection, logger: Logger
    ) async throws -> [[SQLValue]] {
        let result = try await withTaskCancellationHandler {
            // From the connection's event loop, and only while it is open: postgres-nio never answers a query
            // written to a channel that has closed, and the pool can lease a connection that closed a moment ago
            // (terminated by the server, say). On the loop nothing can close it between the check and the write.
            try await connection.eventLoop.flatSubmit { () -> EventLoopFuture<PostgresQueryResult> in
                guard !connection.isClosed else { return connection.eventLoop.makeFailedFuture(StatementNotSent()) }
                return connection.query(query, logger: logger)
            }.get()
        } onCancel: {
            connection.startClosing()
        }
        return try result.rows.map { row in
            try row.map { cell in
                guard cell.bytes != nil else { return .null }
                switch cell.dataType {
                case .int2, .int4, .int8: return .integer(try cell.decode(Int64.self))
                case .float4, .float8, .numeric: return .real(try cell.decode(Double.self))
                default: return .text(try cell.decode(String.self))
                }
            }
        }
    }
}

/// The leased connection had closed before a statement was sent on it: nothing was sent, and whatever transaction
/// it held ended with it. Worth another try on another connection.
struct StatementNotSent: Error {}

extension PostgresClient {
    /// Runs `body` on a leased connection, and again on another while the one leased had closed before a statement
    /// was sent (the pool drops it once it learns of the close). Ends with `body`'s other errors, or cancellation.
    func withOpenConnection<Result: Sendable>(
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        while true {
            do {
                return try await withConnection(body)
            } catch is StatementNotSent {
                try Task.checkCancellation()
            }
        }
    }
}

extension PostgresConnection {
    /// Starts closing the connection without waiting: from synchronous code (a cancellation handler, a `defer`),
    /// where postgres-nio's `close()` is otherwise ambiguous in an async context.
    func startClosing() {
        let closing: EventLoopFuture<Void> = close()
        _ = closing
    }
}
#endif
