import Foundation
import NIOPosix
import PostgresNIO
import Statehouse

/// Keeps state in a PostgreSQL table shared by every process on every machine that uses it, and tells each of them
/// within milliseconds when another changed a key.
///
/// ```swift
/// let client = PostgresClient(configuration: configuration)
/// let shared = PostgresStorage(client: client, table: "statehouse_state")
/// try await withThrowingDiscardingTaskGroup { group in
///     // The client leases no connection without run(); on this executor, blocked callers cannot starve it.
///     group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
///     let flags = StateContainer(Flags(), key: "flags", storage: shared)
///     flags.update { $0.beta = true }             // one transaction: atomic across every machine
/// }
/// ```
///
/// One row per key holds the value (`bytea`), a version and the time of the last write; the table, its version
/// sequence and a trigger are made by a migration the first time the storage is used. Every commit is announced
/// with `NOTIFY` on a channel named after the table, with the row's version and the key's digest, never the value.
///
/// - ``transact(key:_:)`` locks the row (`SELECT … FOR UPDATE`), so a container's `update` is atomic with respect to
///   every other writer: three processes × 1,000 increments end at exactly 3,000.
/// - ``fingerprint(key:)`` is the row's version, and ``watchChanges(of:_:)`` listens on one connection for every
///   watched key; after a lost connection it listens again, with backoff, and catches up by version, so a change
///   made meanwhile is reported once.
/// - An operation whose connection is lost, or that finds the server unreachable, runs again on a new connection
///   until ``timeout`` has passed; then it throws, and a container keeps the change pending.
///
/// The storage's operations are synchronous, as `StateStorage` is: each blocks its calling thread until PostgreSQL
/// answers, while the work runs in a task on a SwiftNIO event loop. Called from Swift's cooperative pool (an
/// `async` function, a `Task`), it blocks one of the pool's threads for that time, as any blocking I/O would; the
/// work itself never needs the pool. Two cautions follow:
/// - The client's `run()` opens the connections: start its task on ``executor``, where blocked pool threads cannot
///   starve it. An operation that waits longer than ``timeout`` throws instead of hanging.
/// - On an event loop's thread (a SwiftNIO channel handler, a task on an event-loop executor) the operations throw
///   `StorageError.Kind.invalidConfiguration` instead of blocking the loop their own connection may need.
///
/// Every failure is a `StorageError` with the key, the operation and what postgres-nio reported as its cause
/// (``PostgresErrorCause``: not postgres-nio's `PSQLError`, whose query holds the value); neither messages nor causes
/// hold the value or the password.
public final class PostgresStorage: Sendable {
    /// The client whose pooled connections the storage uses.
    public let client: PostgresClient
    /// The table holding the state.
    public let table: String
    /// How long an operation may wait for PostgreSQL, reconnections included, before it throws.
    public let timeout: Duration

    /// The runner and listener, or why the storage cannot work: every operation then throws that.
    private let parts: Result<Parts, StorageError>

    private struct Parts: Sendable {
        let runner: OperationRunner
        let listener: ChangeListener
    }

    /// A storage in `table` of the database `client` connects to; the table is made the first time it is used.
    ///
    /// An invalid table name does not stop the program: every operation of the storage throws the reason, so a
    /// container on it starts from its default, writes nothing, and says why in its `storageError`.
    ///
    /// - Parameters:
    ///   - client: A client whose `run()` is running (or will be) for as long as the storage is used.
    ///   - table: The table's name: 1 to 48 lowercase letters, digits and underscores, starting with a letter or an
    ///     underscore. Its version sequence and trigger are named after it (`<table>_version`, `<table>_notify`).
    ///   - timeout: How long an operation may wait for PostgreSQL, reconnections included, before it throws.
    public init(client: PostgresClient, table: String = "statehouse_state", timeout: Duration = .seconds(30)) {
        self.client = client
        self.table = table
        self.timeout = timeout
        parts = Result { () throws(StorageError) in
            let runner = OperationRunner(client: client, names: try TableNames(validating: table), timeout: timeout)
            return Parts(runner: runner, listener: ChangeListener(runner: runner))
        }
    }

    /// Makes the table now, if it does not exist yet, instead of at the first operation.
    ///
    /// - Throws: `StorageError` (operation `.open`) if the table name is invalid or the migration fails.
    public func migrate() async throws(StorageError) {
        let runner = try parts.get().runner
        do {
            try await runner.withConnection(until: .now + timeout) { _ in }
        } catch {
            throw runner.storageError(error, operation: .open, key: nil)
        }
    }

    public func load(key: String) throws -> Data? {
        let stored = StoredKey(key)
        return try perform(.load, key: key) { runner, deadline in
            try await runner.withConnection(until: deadline) { connection -> Data? in
                let row = try await connection.rows(
                    "SELECT value FROM \(unescaped: runner.names.table) WHERE key_digest = \(stored.digest)",
                    logger: runner.logger
                ).decodeFirst(Data?.self)
                return row ?? nil
            }
        }
    }

    public func save(_ data: Data, key: String) throws {
        _ = try saveReturningFingerprint(data, key: key)
    }

    public func remove(key: String) throws {
        let stored = StoredKey(key)
        try perform(.remove, key: key) { runner, deadline in
            try await runner.withConnection(until: deadline) { connection in
                try await connection.run(
                    """
                    UPDATE \(unescaped: runner.names.table)
                    SET value = NULL, version = nextval('\(unescaped: runner.names.sequence)'), updated_at = now()
                    WHERE key_digest = \(stored.digest) AND value IS NOT NULL
                    """,
                    logger: runner.logger
                )
            }
        }
    }

    /// Runs `work` with the runner, blocking the calling thread until it ends.
    private func perform<Outcome: Sendable>(
        _ operation: StorageError.Operation,
        key: String,
        _ work: @escaping @Sendable (OperationRunner, ContinuousClock.Instant) async throws -> Outcome
    ) throws(StorageError) -> Outcome {
        let runner = try parts.get().runner
        return try runner.blocking(operation, key: key) { _, deadline in try await work(runner, deadline) }
    }
}

extension PostgresStorage: TransactionalStorage {
    /// The row's version: new at every save and removal, by anyone (absent while nothing is stored).
    public func fingerprint(key: String) throws -> StorageFingerprint {
        let stored = StoredKey(key)
        return try perform(.fingerprint, key: key) { runner, deadline in
            try await runner.withConnection(until: deadline) { connection in
                let version = try await connection.rows(
                    """
                    SELECT version FROM \(unescaped: runner.names.table)
                    WHERE key_digest = \(stored.digest) AND value IS NOT NULL
                    """,
                    logger: runner.logger
                ).decodeFirst(Int64.self)
                return version.map { StorageFingerprint([$0]) } ?? .absent
            }
        }
    }

    /// Exact: one statement writes the row and returns its new version.
    ///
    /// An existing row takes its version once it is locked, not `excluded.version` (drawn before the statement
    /// waited for a writer holding the row): a write that commits after another always has the higher version, which
    /// the watchers' listener relies on (it skips an announced version at or below one it knows).
    ///
    /// A write whose connection is lost runs again on a new one. If the lost one had committed, the data is stored
    /// twice (announced twice, with two versions), as if the save had been made a moment later.
    public func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        let stored = StoredKey(key)
        return try perform(.save, key: key) { runner, deadline in
            try await runner.withConnection(until: deadline) { connection in
                let version = try await connection.rows(
                    """
                    INSERT INTO \(unescaped: runner.names.table) (key_digest, key, value, version)
                    VALUES (\(stored.digest), \(stored.text), \(data), nextval('\(unescaped: runner.names.sequence)'))
                    ON CONFLICT (key_digest) DO UPDATE
                    SET value = excluded.value, version = nextval('\(unescaped: runner.names.sequence)'),
                        updated_at = now()
                    RETURNING version
                    """,
                    logger: runner.logger
                ).decodeFirst(Int64.self)
                return version.map { StorageFingerprint([$0]) } ?? .absent
            }
        }
    }

    /// Locks the key's row (`SELECT … FOR UPDATE`), calls `transform` on this thread with its data, stores the
    /// result and commits: no other writer, on any machine, changes the key in between.
    ///
    /// `transform` runs once. If the connection is lost after it ran, the result is stored on a new connection if
    /// the key still holds the data `transform` was given, and the transaction fails otherwise (see the
    /// `StorageError`'s message); a commit whose answer was lost is looked up rather than guessed, and when it cannot
    /// be, the error says so (``outcomeIsUnknown(after:)``).
    public func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        let stored = StoredKey(key)
        let runner = try parts.get().runner
        var transformError: (any Error)?
        let fingerprint: StorageFingerprint? = try runner.blocking(.transact, key: key) { data in
            do {
                return .store(try transform(data))
            } catch {
                transformError = error
                return .abandon
            }
        } _: { call, deadline in
            try await Transaction(runner: runner, key: stored, call: call, deadline: deadline, keyName: key).run()
        }
        if let transformError { throw transformError }
        guard let fingerprint else {
            throw StorageError(
                .io, key: key, operation: .transact,
                message: "The transaction on \(String(reflecting: key)) in \(table) ended without storing anything."
            )
        }
        return fingerprint
    }

    /// `true` for an error thrown when a commit was sent and neither its answer nor the server's record of it
    /// (`pg_xact_status`) came in time: a container's `update` then does not run the transaction again.
    public func outcomeIsUnknown(after error: StorageError) -> Bool {
        error.cause is PostgresFailure.OutcomeUnknown
    }
}

extension PostgresStorage: ChangeNotifyingStorage {
    /// Calls `onChange` on a queue of the storage whenever the row of `key` changes, by anyone, until the watch is
    /// cancelled.
    ///
    /// The first call comes once the watch is live (the storage listens on one connection for every key), so a
    /// change made while it was being set up is not missed. After a lost connection the storage listens again, with
    /// backoff, and calls `onChange` once if the key changed meanwhile. Calls are hints: this process's own writes
    /// cause them too.
    ///
    /// - Throws: `StorageError` if the table name is invalid.
    public func watchChanges(
        of key: String,
        _ onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> StorageWatch {
        try parts.get().listener.watch(StoredKey(key), onChange)
    }
}

extension StateStorage where Self == PostgresStorage {
    /// A storage in `table` of the database `client` connects to; see ``PostgresStorage``.
    public static func postgres(client: PostgresClient, table: String = "statehouse_state") -> PostgresStorage {
        PostgresStorage(client: client, table: table)
    }
}

extension PostgresStorage {
    /// An executor on one of SwiftNIO's event loops, never on Swift's cooperative pool: run the client on it.
    ///
    /// The storage's operations block their calling thread while they wait for a connection, and the client's
    /// `run()` is what opens connections. A task started on the cooperative pool needs a pool thread for its first
    /// step: if callers waiting for a connection held every one, that `run()` would never start. Started with this
    /// executor as its preference, the task and every child task of `run()` stay on the event loop from their first
    /// step, so nothing blocked on the pool can starve them:
    ///
    /// ```swift
    /// try await withThrowingDiscardingTaskGroup { group in
    ///     group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
    ///     try await serve(storage: PostgresStorage(client: client))
    /// }
    /// ```
    public static let executor: any TaskExecutor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
}
