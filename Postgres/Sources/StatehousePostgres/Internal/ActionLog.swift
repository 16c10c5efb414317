import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import PostgresNIO

/// One action as the log holds it.
struct LogEntry: Sendable {
    let sequence: Int64
    /// The ``ReplicatedStore`` that appended it.
    let origin: UUID
    /// Its number among the actions of that store, counted from 1.
    let local: Int64
    let action: ByteBuffer
}

/// The SQL of a replicated store's action log: appending, reading after a sequence number, snapshots. Every call
/// leases a connection of the client's pool, with the log migrated, and fails on a lost connection or after
/// ``operationTimeout`` (callers retry).
final class ActionLog: Sendable {
    let client: PostgresClient
    let names: LogNames
    let logger = Logger(label: "StatehousePostgres", factory: { _ in SwiftLogNoOpLogHandler() })
    /// Where the store's tasks run: an event loop, never blocked, where Swift's cooperative pool may be (see
    /// ``EventLoopTaskExecutor``).
    let executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
    private let isMigrated = NIOLockedValueBox(false)
    /// How long one call may wait for PostgreSQL before it fails with ``TimedOut``.
    let operationTimeout = Duration.seconds(5)

    init(client: PostgresClient, names: LogNames) {
        self.client = client
        self.names = names
    }

    /// Runs `body` on a leased connection of the migrated log, for at most ``operationTimeout``.
    func withConnection<Result: Sendable>(
        _ body: @escaping @Sendable (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await bounded(by: operationTimeout, on: executor) { [self] in
            try await client.withConnection { connection in
                try await migrateIfNeeded(on: connection)
                return try await body(connection)
            }
        }
    }

    /// Makes the log, once per store.
    func migrateIfNeeded(on connection: PostgresConnection) async throws {
        guard !isMigrated.withLockedValue({ $0 }) else { return }
        try await Schema.migrate(names.log, LogSchema.migrations(for: names), on: connection, logger: logger)
        isMigrated.withLockedValue { $0 = true }
    }

    /// Appends `actions`, numbered `locals` by `origin`, in one statement: all or none, with consecutive sequence
    /// numbers after the head's.
    func append(_ actions: [ByteBuffer], locals: [Int64], origin: UUID) async throws {
        let (count, names, logger) = (Int64(actions.count), names, logger)
        try await withConnection { connection in
            try await connection.run(
                """
                WITH head AS (
                    UPDATE \(unescaped: names.head) SET sequence = sequence + \(count) RETURNING sequence - \(count) AS base
                )
                INSERT INTO \(unescaped: names.log) (sequence, origin, local, action)
                SELECT head.base + entry.position, \(origin), entry.local, entry.action
                FROM head, unnest(\(locals)::bigint[], \(actions)::bytea[]) WITH ORDINALITY AS entry(local, action, position)
                """,
                logger: logger
            )
        }
    }

    /// Whether the action numbered `local` by `origin` is in the log: after a lost answer, whether its append
    /// committed (an append is all or none, so this answers for the whole batch it led).
    func contains(origin: UUID, local: Int64) async throws -> Bool {
        let (names, logger) = (names, logger)
        return try await withConnection { connection in
            try await connection.rows(
                "SELECT 1 FROM \(unescaped: names.log) WHERE origin = \(origin) AND local = \(local)",
                logger: logger
            ).decodeFirst(Int32.self) != nil
        }
    }

    /// Up to `limit` entries after `sequence`, in order.
    func entries(after sequence: Int64, limit: Int) async throws -> [LogEntry] {
        let (names, logger) = (names, logger)
        return try await withConnection { connection in
            try await connection.rows(
                """
                SELECT sequence, origin, local, action FROM \(unescaped: names.log)
                WHERE sequence > \(sequence) ORDER BY sequence LIMIT \(Int64(limit))
                """,
                logger: logger
            ).map { row in
                let (sequence, origin, local, action) = try row.decode((Int64, UUID, Int64, ByteBuffer).self)
                return LogEntry(sequence: sequence, origin: origin, local: local, action: action)
            }
        }
    }

    /// The newest snapshot taken before the first action `origin` appended: the encoded state after `sequence`.
    ///
    /// A snapshot after one of `origin`'s actions would stand for it, and only `origin`'s store can run that action's
    /// effects and answer its `send`. One statement reads both tables, so an action of `origin` committed too late
    /// to be seen has a sequence number above every snapshot seen (a snapshot follows its action's commit).
    func newestSnapshot(before origin: UUID) async throws -> (sequence: Int64, state: ByteBuffer)? {
        let (names, logger) = (names, logger)
        return try await withConnection { connection in
            try await connection.rows(
                """
                SELECT sequence, state FROM \(unescaped: names.snapshots)
                WHERE sequence < coalesce(
                    (SELECT min(sequence) FROM \(unescaped: names.log) WHERE origin = \(origin)), \(Int64.max)
                )
                ORDER BY sequence DESC LIMIT 1
                """,
                logger: logger
            ).decodeFirst(Int64.self, ByteBuffer.self).map { (sequence: $0.0, state: $0.1) }
        }
    }

    /// Stores `state`, the encoded state after `sequence`; a snapshot already there is kept (it is the same state).
    func saveSnapshot(_ state: ByteBuffer, after sequence: Int64) async throws {
        let (names, logger) = (names, logger)
        try await withConnection { connection in
            try await connection.run(
                """
                INSERT INTO \(unescaped: names.snapshots) (sequence, state) VALUES (\(sequence), \(state))
                ON CONFLICT (sequence) DO NOTHING
                """,
                logger: logger
            )
        }
    }
}
