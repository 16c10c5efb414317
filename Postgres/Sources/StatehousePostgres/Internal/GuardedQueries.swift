import Logging
import PostgresNIO

// Every query that returns rows reads them all at once, through postgres-nio's future-based `query`, never as an
// async sequence.
//
// postgres-nio 1.33.2 stops the process (a `preconditionFailure` in `RowStreamStateMachine.channelReadComplete`)
// when a connection closes while a result streamed to an async sequence waits for its consumer to ask for more
// rows: NIO then hands over the rows left in the socket, unasked. A replica reading a page of the log when its
// connection was terminated died so. The future-based query collects the rows on the connection's event loop and
// asks for more at once, so the stream never waits for a consumer, and a lost connection fails the query instead.

extension PostgresConnection {
    /// Every row of `query`'s result.
    func rows(_ query: PostgresQuery, logger: Logger) async throws -> [PostgresRow] {
        try await self.query(query, logger: logger).get().rows
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
