#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Dispatch
import Foundation
import Logging
import PostgresNIO

/// The tracker's tables in a PostgreSQL database that servers and command lines on any number of machines share,
/// through postgres-nio's pooled `PostgresClient`.
///
/// - A write is one transaction that first takes an advisory lock (``PostgresSchema/writeLock``), so writers run one
///   at a time, as with SQLite's immediate transactions: two servers starting the same project at once end as on
///   SQLite, one started and the other told it is running already. The unique indexes back the rules as on SQLite.
///   Waiting for the lock is bounded by `lock_timeout`, set from the action's deadline; past it the action gets
///   ``TrackerError/databaseLocked(waited:)``.
/// - A `COMMIT` whose answer is lost with its connection (or not given in time) may have landed: the server is asked
///   (`pg_xact_status`) before the action is reported failed, so that an action that took effect is never reported
///   as failed, and retried by its user into a second effect.
/// - Every commit to the tables is announced by a trigger (`NOTIFY`), and ``watch(changed:lost:)`` listens
///   (``PostgresChangeListener``).
/// - The rules are synchronous and postgres-nio is not: a write runs on a dispatch queue of its own and a snapshot
///   on the tracker's reading queue, each blocking for its statements (``waitFor(timeout:_:)``), never on Swift's
///   cooperative pool.
final class PostgresBackend: TrackerBackend {
    let address: PostgresAddress
    let client: PostgresClient
    private let lockTimeout: Duration
    /// How long one statement may take before the server counts as unreachable.
    private let statementTimeout: Duration
    /// Writes of this process, one at a time, as GRDB's writer queue does on SQLite.
    private let writer = DispatchQueue(label: "timetrack.postgres.writer")
    /// The client's `run()`, which opens its connections; cancelled when the backend goes away.
    private let running: Task<Void, Never>
    private static let logger = Logger(label: "timetrack.postgres")

    var location: String { address.redacted }

    private init(address: PostgresAddress, lockTimeout: Duration, statementTimeout: Duration) {
        self.address = address
        self.lockTimeout = lockTimeout
        self.statementTimeout = statementTimeout
        client = PostgresClient(configuration: address.configuration)
        running = Task.detached { [client] in await client.run() }
    }

    deinit {
        running.cancel()
    }

    /// Connects once on a connection of its own, which says at once why it cannot (refused, no such database,
    /// authentication failed) where the pool would keep trying, and makes or checks the schema there.
    static func open(
        _ address: PostgresAddress, lockTimeout: Duration, statementTimeout: Duration
    ) async throws(TrackerError) -> PostgresBackend {
        do {
            let connection = try await PostgresConnection.connect(
                configuration: try address.connectionConfiguration(), id: 1, logger: logger
            )
            var failure: (any Error)?
            do {
                try await onQueue(DispatchQueue.global()) {
                    try transaction(on: connection, lockWait: .seconds(30), timeout: statementTimeout, lookUp: nil) { sql in
                        try PostgresSchema.migrate(sql, location: address.redacted)
                    }
                }
            } catch {
                failure = error
            }
            // Closed before it is released, which postgres-nio requires.
            try? await connection.close()
            if let failure { throw failure }
        } catch let error as TrackerError {
            throw error
        } catch {
            throw .database("could not open \(address.redacted): \(describe(error))")
        }
        return PostgresBackend(address: address, lockTimeout: lockTimeout, statementTimeout: statementTimeout)
    }

    func write<Result: Sendable>(
        until deadline: ContinuousClock.Instant, _ body: @escaping @Sendable (any SQLStatements) throws -> Result
    ) async throws -> Result {
        do {
            do {
                return try await transaction(until: deadline, body)
            } catch let error as PSQLError where Self.tookAnID(error) {
                // Another program inserted rows with ids of its own (data moved over from SQLite, say), which the
                // identity was about to give: on SQLite the next id is past every id in the table, so here too
                // the identity is moved past them, and the action (rolled back, nothing written) tried again.
                try await transaction(until: deadline) { sql in try PostgresSchema.skipTakenIDs(sql) }
                return try await transaction(until: deadline, body)
            }
        } catch let error as TrackerError {
            throw error
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "55P03" {
            throw TrackerError.databaseLocked(waited: lockTimeout)
        } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23505" {
            throw UniqueViolation(reason: Self.describe(error))
        } catch {
            throw TrackerError.database("could not write to \(location): \(Self.describe(error))")
        }
    }

    /// One attempt at `body` in a transaction holding the write lock, errors as they come.
    private func transaction<Result: Sendable>(
        until deadline: ContinuousClock.Instant, _ body: @escaping @Sendable (any SQLStatements) throws -> Result
    ) async throws -> Result {
        try await client.withOpenConnection { [writer, statementTimeout] connection in
            try await Self.onQueue(writer) {
                // Waiting in line counts: what is left of the deadline, and never 0, which is "no limit".
                let lockWait = max(ContinuousClock.now.duration(to: deadline), .milliseconds(1))
                return try Self.transaction(
                    on: connection, lockWait: lockWait, timeout: statementTimeout, lookUp: self.isCommitted, body
                )
            }
        }
    }

    /// Whether `error` is an insert refused because its new id is taken (a primary key's unique violation).
    private static func tookAnID(_ error: PSQLError) -> Bool {
        error.code == .server && error.serverInfo?[.sqlState] == "23505"
            && error.serverInfo?[.constraintName]?.hasSuffix("_pkey") == true
    }

    func read<Result>(_ body: (any SQLStatements) throws -> Result) throws(TrackerError) -> Result {
        let statements = PostgresStatements(run: { [client] query in
            try await client.withOpenConnection { connection in
                try await PostgresStatements.values(of: query, on: connection, logger: Self.logger)
            }
        }, timeout: statementTimeout)
        do {
            return try body(statements)
        } catch let error as TrackerError {
            throw error
        } catch {
            throw .database("could not read \(location): \(Self.describe(error))")
        }
    }

    func watch(
        changed: @escaping @Sendable () -> Void, lost: @escaping @Sendable (TrackerError) -> Void
    ) throws(TrackerError) -> any Sendable {
        PostgresChangeListener(address: address, logger: Self.logger, changed: changed)
    }

    /// Runs `body` in a transaction on `connection` that holds ``PostgresSchema/writeLock``, waiting at most
    /// `lockWait` for it. Blocks: run it on a dispatch queue.
    ///
    /// - Parameter lookUp: Tells whether the transaction of an id committed, asked on another connection when the
    ///   `COMMIT`'s answer is lost; `nil`: the error stands.
    private static func transaction<Result>(
        on connection: PostgresConnection, lockWait: Duration, timeout: Duration,
        lookUp: ((_ transaction: String) throws -> Bool)?,
        _ body: (any SQLStatements) throws -> Result
    ) throws -> Result {
        // A statement may wait for another writer's locks (the write lock, a row another program holds) as long
        // as `lock_timeout` lets it, then answers 55P03 (``TrackerError/databaseLocked(waited:)``): it gets that
        // long on top of the statement timeout, or a lock timeout longer than the statement timeout
        // (`--lock-timeout 60`) ended in "the server did not answer" instead of a wait, or a refusal saying why.
        let sql = PostgresStatements(run: { query in
            try await PostgresStatements.values(of: query, on: connection, logger: logger)
        }, timeout: timeout + lockWait)
        try sql.execute("BEGIN")
        do {
            // SET takes no parameters; a whole number of milliseconds.
            try sql.execute("SET LOCAL lock_timeout = \(Int64(lockWait / .milliseconds(1)) + 1)")
            try sql.execute("SELECT 1 FROM pg_advisory_xact_lock(?)", [.integer(PostgresSchema.writeLock)])
            let result = try body(sql)
            // `nil` when the action wrote nothing: then nothing can have landed.
            let transaction = try sql.value("SELECT pg_current_xact_id_if_assigned()::text", [])?.text
            do {
                try sql.execute("COMMIT")
            } catch let error as StatementNotSent {
                throw error  // never sent: it did not land, and the write runs again on another connection
            } catch where !leavesConnectionOpen(error) {
                guard let transaction, let lookUp, try lookUp(transaction) else { throw error }
            }
            return result
        } catch {
            // A refusal, or the server's error, leaves the connection open: end the transaction there. A lost or
            // silent connection takes its transaction with it, and might leave a ROLLBACK unanswered.
            if leavesConnectionOpen(error) { try? sql.execute("ROLLBACK") }
            throw error
        }
    }

    /// Whether `transaction`, whose `COMMIT` lost its answer, committed: asked on another connection until the server
    /// knows (the backend of a lost connection may still be committing: a `COMMIT` that outlasted the statement
    /// timeout gets as long again).
    ///
    /// A question that gets no answer is asked again until then too: what lost the `COMMIT`'s answer (the network,
    /// a server restarting) often keeps the server out of reach a little longer, and giving up at once would report
    /// as failed an action that may have landed.
    private func isCommitted(_ transaction: String) throws -> Bool {
        let deadline = ContinuousClock.now + statementTimeout * 2
        while true {
            // `nil`: no answer (the server out of reach), asked again a little later.
            let status = try? status(of: transaction)
            switch status {
            case "committed": return true
            case "aborted": return false
            default:
                guard ContinuousClock.now < deadline else {
                    throw TrackerError.database(
                        "could not tell whether the last write to \(location) took effect: the server did not say in \(statementTimeout * 2); look before doing it again"
                    )
                }
                // On the writer queue, never the cooperative pool; each question unanswered is a connection tried.
                Thread.sleep(forTimeInterval: status == nil ? 0.1 : 0.01)
            }
        }
    }

    /// The status of `transaction` (`committed`, `aborted`, `in progress`), asked on a connection of its own,
    /// outside the pool: the actions waiting their turn behind this one hold a pooled connection each, and with as
    /// many of them as the pool has connections, a question asked through the pool waited for them, as they
    /// waited for this one.
    private func status(of transaction: String) throws -> String? {
        let configuration = try address.connectionConfiguration()
        let query = PostgresStatements.query("SELECT pg_xact_status(?::xid8)", [.text(transaction)])
        return try waitFor(timeout: statementTimeout) {
            let connection = try await PostgresConnection.connect(configuration: configuration, id: 2, logger: Self.logger)
            let rows: [[SQLValue]]
            do {
                rows = try await PostgresStatements.values(of: query, on: connection, logger: Self.logger)
            } catch {
                try? await connection.close()
                throw error
            }
            try? await connection.close()
            return rows.first?.first?.text
        }
    }

    /// Whether the connection is still there after `error`: after a rule's refusal or the server's error; not
    /// after a lost connection, or a statement PostgreSQL did not answer in time (``waitFor(timeout:_:)``).
    private static func leavesConnectionOpen(_ error: any Error) -> Bool {
        switch error {
        case is StatementNotSent:
            return false
        case let error as PSQLError:
            return error.code == .server
        case let error as TrackerError:
            if case .database = error { return false }
            return true
        default:
            return true
        }
    }

    /// Runs blocking `work` on `queue`, and returns its result to the awaiting task, which leaves its thread
    /// meanwhile.
    private static func onQueue<Result: Sendable>(
        _ queue: DispatchQueue, _ work: @escaping @Sendable () throws -> Result
    ) async throws -> Result {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Swift.Result { try work() }) }
        }
    }

    /// What went wrong, in words: the server's SQLSTATE and message, or what happened to the connection. Never the
    /// query or its parameters (`String(reflecting:)` of a `PSQLError` has both), never the password.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return "\(error)" }
        if error.code == .server, let info = error.serverInfo {
            return "PostgreSQL error \(info[.sqlState] ?? "?"): \(info[.message] ?? "no message")"
        }
        if let underlying = error.underlying {
            return "the connection failed (\(underlying))"
        }
        return "postgres-nio error \(error.code)"
    }
}
#endif
