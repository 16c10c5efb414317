import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOPosix
import PostgresNIO
import Statehouse

/// Runs the storage's operations: on a leased connection, with the table migrated, retried on a new connection
/// while the server is unreachable, in a task on an event loop that the calling thread waits for.
final class OperationRunner: Sendable {
    let client: PostgresClient
    let names: TableNames
    let timeout: Duration
    let executor: EventLoopTaskExecutor
    let logger = Logger(label: "StatehousePostgres", factory: { _ in SwiftLogNoOpLogHandler() })
    private let isMigrated = NIOLockedValueBox(false)

    /// Lets the task report its own failure (it knows more) before the waiting thread gives up on it.
    private var grace: Duration { min(timeout, .seconds(5)) }

    init(client: PostgresClient, names: TableNames, timeout: Duration) {
        self.client = client
        self.names = names
        self.timeout = timeout
        self.executor = EventLoopTaskExecutor(MultiThreadedEventLoopGroup.singleton.next())
    }

    /// Runs `work` and blocks the calling thread until it ends, answering a transaction's question with `answer`.
    ///
    /// - Throws: `StorageError`: `work`'s error, or why it could not run.
    func blocking<Outcome: Sendable>(
        _ operation: StorageError.Operation,
        key: String?,
        answer: (Data?) -> BlockingCall<Outcome>.Decision = { _ in .abandon },
        _ work: @escaping @Sendable (BlockingCall<Outcome>, ContinuousClock.Instant) async throws -> Outcome
    ) throws(StorageError) -> Outcome {
        // Blocking an event loop's thread until a connection (maybe on that loop) answers could wait forever.
        guard MultiThreadedEventLoopGroup.currentEventLoop == nil else {
            throw StorageError(
                .invalidConfiguration, key: key, operation: operation,
                message: """
                    PostgresStorage was called on a SwiftNIO event-loop thread, which it would have to block until \
                    PostgreSQL answers (forever, if the connection lives on that loop). Call it from another thread: \
                    a Dispatch queue, or a task that does not run on an event loop.
                    """
            )
        }
        let deadline = ContinuousClock.now + timeout
        let call = BlockingCall<Outcome>()
        let task = Task(executorPreference: executor) {
            do {
                call.finish(.success(try await work(call, deadline)))
            } catch {
                call.finish(.failure(error))
            }
        }
        guard let outcome = call.wait(until: deadline + grace, answer: answer) else {
            task.cancel()
            // A commit sent may still land; the task sends none from now on (see `BlockingCall.mayCommit()`).
            let mayHaveStored = call.didStartCommit
            throw StorageError(
                .io, key: key, operation: operation,
                message: """
                    PostgreSQL did not answer within \(timeout + grace) while trying to \(operation.rawValue)\
                    \(Self.subject(key)) in table \(names.table)\(mayHaveStored ? " (the outcome is unknown)" : ""). \
                    Check that the PostgresClient's run() is running (no connection is leased without it) and that \
                    the server is reachable.
                    """,
                cause: mayHaveStored ? PostgresFailure.OutcomeUnknown(underlying: nil) : nil
            )
        }
        do {
            return try outcome.get()
        } catch {
            throw storageError(error, operation: operation, key: key)
        }
    }

    /// Runs `body` on a leased connection of a migrated table, again on a new connection after a transient failure,
    /// until `deadline`.
    func withConnection<Result: Sendable>(
        until deadline: ContinuousClock.Instant,
        _ body: (PostgresConnection) async throws -> Result
    ) async throws -> Result {
        try await retrying(until: deadline) {
            try await client.withConnection { connection in
                try await migrateIfNeeded(on: connection)
                return try await body(connection)
            }
        }
    }

    /// Runs `body` until it succeeds, fails for good, or `deadline` passes, waiting a little longer after each
    /// transient failure (5 ms doubling up to 1 s): the pool meanwhile reconnects with its own backoff.
    func retrying<Result>(
        until deadline: ContinuousClock.Instant,
        _ body: () async throws -> Result
    ) async throws -> Result {
        var delay = Duration.milliseconds(5)
        while true {
            do {
                return try await body()
            } catch where PostgresFailure.isTransient(error) && ContinuousClock.now + delay < deadline {
                try await Task.sleep(for: delay)
                delay = min(delay * 2, .seconds(1))
            }
        }
    }

    /// Makes the table, once per storage.
    func migrateIfNeeded(on connection: PostgresConnection) async throws {
        guard !isMigrated.withLockedValue({ $0 }) else { return }
        try await Schema.migrate(names, on: connection, logger: logger)
        isMigrated.withLockedValue { $0 = true }
    }

    /// `error` as the `StorageError` the storage throws: what happened, and what to do, without the value.
    func storageError(_ error: any Error, operation: StorageError.Operation, key: String?) -> StorageError {
        if let error = error as? StorageError { return error }
        let subject = Self.subject(key)
        let message = PostgresFailure.isTransient(error)
            ? """
            Could not \(operation.rawValue)\(subject) in PostgreSQL table \(names.table): no working connection \
            within \(timeout) (\(PostgresFailure.describe(error))). Check that the server is running and reachable.
            """
            : """
            Could not \(operation.rawValue)\(subject) in PostgreSQL table \(names.table): \
            \(PostgresFailure.describe(error)).
            """
        return StorageError(
            .io, key: key, operation: operation, message: message, cause: PostgresErrorCause.redacting(error)
        )
    }

    private static func subject(_ key: String?) -> String {
        key.map { " \(String(reflecting: $0))" } ?? ""
    }
}
