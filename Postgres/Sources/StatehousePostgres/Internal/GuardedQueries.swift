import Logging
import PostgresNIO

// Every statement goes through `rows(_:logger:)` (or `run(_:logger:)`), which makes two workarounds of postgres-nio
// 1.33.2 in one place.
//
// Rows are read all at once, through postgres-nio's future-based `query`, never as an async sequence: postgres-nio
// stops the process (a `preconditionFailure` in `RowStreamStateMachine.channelReadComplete`) when a connection closes
// while a result streamed to an async sequence waits for its consumer to ask for more rows: NIO then hands over the
// rows left in the socket, unasked. A replica reading a page of the log when its connection was terminated died so.
// The future-based query collects the rows on the connection's event loop and asks for more at once, so the stream
// never waits for a consumer, and a lost connection fails the query instead.
//
// A statement is sent from the connection's event loop, and only while the connection is open: postgres-nio writes a
// query to its channel and waits for the connection's handler to answer it, but a channel that has closed drops the
// write, and that query is never answered (nor does it heed cancellation). The pool can lease a connection that
// closed a moment ago (terminated by the server, say) before it learns of the close; each statement sent on it then
// hung until the operation's timeout. On the loop nothing can close the channel between the check and the write.

extension PostgresConnection {
    /// Every row of `query`'s result.
    ///
    /// - Throws: postgres-nio's error, or ``PostgresFailure/ClosedBeforeSending`` if the connection had closed.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await eventLoop.flatSubmit { [self] () -> EventLoopFuture<PostgresQueryResult> in
            guard !isClosed else { return eventLoop.makeFailedFuture(PostgresFailure.ClosedBeforeSending()) }
            return self.query(query, logger: logger)
        }.get().rows
    }

    /// Runs `query`, a statement whose rows, if any, are not needed.
    func run(_ query: PostgresQuery, logger: Logger) async throws {
        _ = try await rows(query, logger: logger)
    }
}

extension PostgresClient {
    /// Every row of `query`'s result, on a leased connection.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await withConnection { try await $0.rows(query, logger: logger) }
    }
}

extension [PostgresRow] {
    /// The first row's columns, or `nil` if there is none.
    func decodeFirst<each Column: PostgresDecodable>(
        _ columns: repeat (each Column).Type
    ) throws -> (repeat each Column)? {
        try first?.decode((repeat each Column).self)
    }
}
