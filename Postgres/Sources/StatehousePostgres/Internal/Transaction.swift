import Foundation
import Logging
import PostgresNIO
import Statehouse

/// One `transact`: the row locked with `SELECT … FOR UPDATE`, the caller asked what to store, the answer written and
/// committed, atomic with respect to every other writer on every machine.
///
/// The caller is asked once: its answer is a container's `update`, whose body runs on the caller's thread (the
/// container runs the whole transaction again itself when it fails). So when the connection is lost after the
/// question, the transaction is not run again from the start; instead:
/// - if the commit itself may have landed, the server is asked whether it did (`pg_xact_status`); if it cannot say in
///   time, the error says the outcome is unknown (``PostgresFailure/OutcomeUnknown``), and nothing runs it again.
///   So does the caller's timeout, if the commit was sent; a transaction whose caller gave up before never sends it;
/// - otherwise the row is locked again on a new connection, and the answer stored if the row still has the version
///   the caller read; if it holds something else, the transaction fails, since the answer was made from data that is
///   no longer there.
struct Transaction {
    let runner: OperationRunner
    let key: StoredKey
    let call: BlockingCall<StorageFingerprint?>
    let deadline: ContinuousClock.Instant
    let keyName: String

    private var names: TableNames { runner.names }
    private var logger: Logger { runner.logger }

    /// The caller's answer, and the data it was made from.
    private struct Answered {
        let decision: BlockingCall<StorageFingerprint?>.Decision
        let read: Data?
    }

    /// Returns the fingerprint of what the key holds after the transaction, or `nil` if the caller abandoned it.
    func run() async throws -> StorageFingerprint? {
        var answered: Answered?
        return try await runner.withConnection(until: deadline) { connection in
            try await connection.run("BEGIN", logger: logger)
            do {
                let stored = try await lockRow(on: connection)
                if let answered {
                    // Data, not versions, compared: a row made again after a rolled-back first attempt has a new
                    // version but the same (absent) data, which the answer still fits.
                    guard answered.read == stored else { throw conflict() }
                } else {
                    answered = Answered(decision: await call.ask(stored), read: stored)
                }
                guard let answered, case .store(let data) = answered.decision else {
                    await Self.rollBack(connection, logger: logger)
                    return nil
                }
                return try await store(data, replacing: stored, on: connection)
            } catch {
                await Self.rollBack(connection, after: error, logger: logger)
                throw error
            }
        }
    }

    /// Locks the key's row, making it (with no value) if there is none: `FOR UPDATE` locks only rows that exist, and
    /// two transactions that both found none would both go on.
    /// - Returns: The row's data.
    private func lockRow(on connection: PostgresConnection) async throws -> Data? {
        let select: PostgresQuery = try """
            SELECT value FROM \(unescaped: names.table) WHERE key_digest = \(key.digest) FOR UPDATE
            """
        if let row = try await connection.rows(select, logger: logger).decodeFirst(Data?.self) {
            return row
        }
        try await connection.run(
            """
            INSERT INTO \(unescaped: names.table) (key_digest, key, value, version)
            VALUES (\(key.digest), \(key.text), NULL, nextval('\(unescaped: names.sequence)'))
            ON CONFLICT (key_digest) DO NOTHING
            """,
            logger: logger
        )
        guard let row = try await connection.rows(select, logger: logger).decodeFirst(Data?.self) else {
            throw StorageError(
                .io, key: keyName, operation: .transact,
                message: "The row of \(String(reflecting: keyName)) in \(names.table) vanished while being locked; try again."
            )
        }
        return row
    }

    /// Writes `data` (`nil`: removes the value) into the locked row, which holds `stored`, and commits.
    private func store(_ data: Data?, replacing stored: Data?, on connection: PostgresConnection) async throws -> StorageFingerprint {
        guard data != nil || stored != nil else {
            // Removing what is not there: nothing to write, nothing to announce.
            try await connection.run("COMMIT", logger: logger)
            return .absent
        }
        let written = try await connection.rows(
            """
            UPDATE \(unescaped: names.table)
            SET value = \(data), version = nextval('\(unescaped: names.sequence)'), updated_at = now()
            WHERE key_digest = \(key.digest)
            RETURNING version, pg_current_xact_id()::text::bigint
            """,
            logger: logger
        ).decodeFirst(Int64.self, Int64.self)
        guard let (version, transaction) = written else {
            throw StorageError(
                .io, key: keyName, operation: .transact,
                message: "The locked row of \(String(reflecting: keyName)) in \(names.table) was not found; try again."
            )
        }
        // Once the caller gave up, no commit: it reported the transaction as one that stored nothing.
        guard call.mayCommit() else { throw CancellationError() }
        do {
            try await connection.run("COMMIT", logger: logger)
        } catch let error as PostgresFailure.ClosedBeforeSending {
            // Never sent, on a connection whose server ends the transaction: it did not land, ask nobody.
            throw error
        } catch where PostgresFailure.isTransient(error) {
            guard try await isCommitted(transaction) else { throw error }
        }
        return data == nil ? .absent : StorageFingerprint([version])
    }

    /// Whether `transaction`, whose commit lost its connection, committed: asked on another connection until the
    /// server knows (a transaction whose backend is still ending shows as in progress for a moment).
    ///
    /// - Throws: A `StorageError` caused by ``PostgresFailure/OutcomeUnknown`` if the server could not say before the
    ///   deadline. Never a transient error: the transaction must not run again on a new connection, where the row
    ///   holds this very commit's data if it landed, which would be taken for another writer's.
    private func isCommitted(_ transaction: Int64) async throws -> Bool {
        do {
            return try await runner.retrying(until: deadline) {
                let status = try await runner.client.rows(
                    "SELECT pg_xact_status(\(String(transaction))::xid8)", logger: logger
                ).decodeFirst(String?.self) ?? nil
                switch status {
                case "committed"?: return true
                case "aborted"?: return false
                default: throw PostgresFailure.StillInProgress()
                }
            }
        } catch {
            throw StorageError(
                .io, key: keyName, operation: .transact,
                message: """
                    The connection to PostgreSQL was lost while committing a transaction on \
                    \(String(reflecting: keyName)), and whether the commit landed could not be found out in time \
                    (\(PostgresFailure.describe(error))). It was not run again, so that it is never applied twice; \
                    read the key to see whether it was.
                    """,
                cause: PostgresFailure.OutcomeUnknown(underlying: PostgresErrorCause.redacting(error))
            )
        }
    }

    private func conflict() -> StorageError {
        StorageError(
            .io, key: keyName, operation: .transact,
            message: """
                The connection to PostgreSQL was lost during a transaction on \(String(reflecting: keyName)), and \
                another writer changed the key before a new connection locked it again: this transaction's result, \
                made from the data it had read, was not stored. Run the update again.
                """
        )
    }

    /// Ends the transaction on `connection` without its changes, after `error`. A connection that is lost needs
    /// nothing: the server ends its transaction. One that cannot even roll back is closed, so that the pool never
    /// hands out a connection stuck in a failed transaction.
    static func rollBack(_ connection: PostgresConnection, after error: (any Error)? = nil, logger: Logger) async {
        guard !connection.isClosed, error.map(PostgresFailure.leavesConnectionOpen) ?? true else { return }
        do {
            try await connection.run("ROLLBACK", logger: logger)
        } catch {
            try? await connection.close()
        }
    }
}
