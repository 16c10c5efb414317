import NIOConcurrencyHelpers

/// Runs `body` in a task of its own on `executor`, and stops waiting for it after `timeout` or when the calling task
/// is cancelled: then `body` is cancelled and left to end when it will.
///
/// A query that is never answered does not heed cancellation either; a caller that awaited it directly (or in a task
/// group, which waits for its children) would hang with it. The known cause, a query sent on a connection that had
/// closed, is avoided where statements are sent (GuardedQueries.swift); this bound is the last resort for others.
///
/// Its locks are NIO's (pthread mutexes, which ThreadSanitizer sees) rather than `Synchronization.Mutex`, whose
/// futex ThreadSanitizer does not see on Linux; the same goes for the rest of the replicated store.
///
/// - Throws: `body`'s error, ``TimedOut`` after `timeout`, or `CancellationError`.
func bounded<Result: Sendable>(
    by timeout: Duration,
    on executor: any TaskExecutor,
    _ body: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let waiter = NIOLockedValueBox<CheckedContinuation<Result, any Error>?>(nil)
    let tasks = NIOLockedValueBox<[Task<Void, Never>]>([])
    /// Resumes the caller once, with the first outcome; cancels the tasks still running.
    let finish: @Sendable (Swift.Result<Result, any Error>) -> Void = { outcome in
        guard let continuation = waiter.withLockedValue({ $0.take() }) else { return }
        for task in tasks.withLockedValue({ $0 }) { task.cancel() }
        continuation.resume(with: outcome)
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            waiter.withLockedValue { $0 = continuation }
            let work = Task(executorPreference: executor) {
                do {
                    finish(.success(try await body()))
                } catch {
                    finish(.failure(error))
                }
            }
            let timer = Task(executorPreference: executor) {
                guard (try? await Task.sleep(for: timeout)) != nil else { return }
                finish(.failure(TimedOut()))
            }
            tasks.withLockedValue { $0 = [work, timer] }
            if Task.isCancelled { finish(.failure(CancellationError())) }
        }
    } onCancel: {
        finish(.failure(CancellationError()))
    }
}

/// PostgreSQL did not answer in time: the operation may or may not have taken effect.
struct TimedOut: Error {}
