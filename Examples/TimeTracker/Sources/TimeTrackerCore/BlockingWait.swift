#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Dispatch
import NIOConcurrencyHelpers

/// Runs `body` in a task and blocks the calling thread until it ends, or until `timeout` has passed (the task is
/// then cancelled).
///
/// The rules are synchronous (GRDB's transactions are), and postgres-nio is asynchronous: the PostgreSQL backend's
/// statements meet here. Call it only off Swift's cooperative pool (a dispatch queue of its own): the task runs on
/// the pool, and a pool whose every thread waited here would have none left to run it.
///
/// On `NIOLockedValueBox` (a pthread mutex), which ThreadSanitizer sees, unlike `Mutex` on Linux.
func waitFor<Result: Sendable>(
    timeout: Duration, _ body: @escaping @Sendable () async throws -> Result
) throws -> Result {
    let outcome = NIOLockedValueBox<Swift.Result<Result, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    let task = Task {
        let result: Swift.Result<Result, any Error>
        do {
            result = .success(try await body())
        } catch {
            result = .failure(error)
        }
        outcome.withLockedValue { $0 = result }
        done.signal()
    }
    if done.wait(timeout: .now() + .milliseconds(Int(timeout / .milliseconds(1)))) == .timedOut {
        task.cancel()
        throw TrackerError.database("PostgreSQL did not answer within \(timeout) (is the server up and reachable?)")
    }
    guard let result = outcome.withLockedValue({ $0 }) else {
        throw TrackerError.database("PostgreSQL's answer was lost")  // set before the signal: never happens
    }
    return try result.get()
}
#endif
