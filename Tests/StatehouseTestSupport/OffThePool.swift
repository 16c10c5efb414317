import Foundation

/// Runs `body` on a thread of its own and returns what it returns, holding no thread of the caller's meanwhile.
///
/// For every wait on something outside the test's tasks (another process's output or end, a semaphore): the
/// cooperative pool has one thread per core, and a test blocking one stalls every test running beside it. CI saw two
/// tests waiting for child processes hold both threads of a two-core machine for a minute.
public func offThePool<T: Sendable, Failure: Error>(
    _ body: @escaping @Sendable () throws(Failure) -> T
) async throws(Failure) -> T {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, Failure>, Never>) in
        Thread.detachNewThread { continuation.resume(returning: Result(catching: body)) }
    }
    return try result.get()
}

/// Runs `body(0)`, …, `body(count - 1)` each on a thread of its own, at once, and returns when all have returned.
///
/// Threads rather than tasks or `DispatchQueue.concurrentPerform` (which runs part of the work on the calling
/// thread): the bodies hammer locks and block, which must never hold the cooperative pool's threads. The threads
/// start on this storm's turn (``duringThreadStorm(_:)``).
public func onNewThreads(_ count: Int, _ body: @escaping @Sendable (_ thread: Int) -> Void) async {
    await duringThreadStorm {
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<count {
                group.addTask { await offThePool { body(thread) } }
            }
        }
    }
}
