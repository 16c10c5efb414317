import Dispatch
import Synchronization

/// A caller from outside a store's work, waiting for its work to be done: blocked on its thread (``wait()``) or
/// suspended in its task (``waitAsync()``).
///
/// The store's worker ends the wait with one of two outcomes (``end(with:)``): the caller's work and everything it
/// queued synchronously is done, or it is the caller's turn to do it itself (see ``TurnQueue``). Only a blocked
/// caller is ever handed the turn: a suspended one needs a thread of Swift's cooperative pool to resume, and those
/// may all be blocked in `dispatch` calls waiting behind it.
///
/// A blocked caller first spins a little before it parks on a semaphore: under contention the worker usually ends
/// the wait within a few hundred nanoseconds, far less than a park and a wake cost.
@usableFromInline
final class WaitingCaller: Sendable {
    @usableFromInline
    enum Outcome: Sendable {
        /// The work is done: the caller returns.
        case done
        /// The caller is the store's worker now: it does the work queued ahead of its own, then its own.
        case yourTurn
    }

    private enum Waiting {
        case notYet
        case blocked(DispatchSemaphore)
        case suspended(UnsafeContinuation<Outcome, Never>)
        case ended(Outcome)
    }

    /// The caller's items not done yet: its own and those they queued; only read and written under the store's
    /// queue lock (relaxed atomics only to make the class `Sendable`).
    private let outstanding = Atomic<Int>(1)
    /// Set once the wait has ended, for the spinning caller to see without the lock.
    private let hasEnded = Atomic<Bool>(false)
    private let waiting = Locked(Waiting.notYet)

    /// The thread a blocking caller blocks, as ``WaitGraph`` knows it; `nil` for a suspended task.
    let blockedThread: UInt?

    /// Whether the caller blocks its thread, and so may be handed the turn.
    var isBlocking: Bool { blockedThread != nil }

    /// - Parameter blockedThread: The thread that will block, registered in ``WaitGraph``; `nil` for a task.
    @usableFromInline
    init(blocking blockedThread: UInt?) {
        self.blockedThread = blockedThread
    }

    /// The wait is over, or is about to be (under the store's queue lock, where it was decided): the caller's thread
    /// is no longer blocked for the store, though it may not have woken yet. Said here, not by the caller once it
    /// wakes, so that no cycle check in between follows an edge that no longer holds.
    func leaveWaitGraph() {
        if let blockedThread { WaitGraph.unregister(blockedThread) }
    }

    /// The number of items of this caller not done yet (under the store's queue lock).
    var itemsOutstanding: Int { outstanding.load(ordering: .relaxed) }

    /// Counts another item queued for this caller (under the store's queue lock).
    func addItem() {
        outstanding.add(1, ordering: .relaxed)
    }

    /// Counts an item of this caller done (under the store's queue lock).
    /// - Returns: Whether it was the last one.
    func itemDone() -> Bool {
        outstanding.subtract(1, ordering: .relaxed).newValue == 0
    }

    /// Ends the wait. Called once, outside the store's locks: it may wake a thread or resume a task.
    func end(with outcome: Outcome) {
        hasEnded.store(true, ordering: .releasing)
        let previous = waiting.withLock { waiting in
            defer { waiting = .ended(outcome) }
            return waiting
        }
        switch previous {
        case .blocked(let semaphore): semaphore.signal()
        case .suspended(let continuation): continuation.resume(returning: outcome)
        case .notYet, .ended: break
        }
    }

    /// Blocks the calling thread until ``end(with:)``.
    @usableFromInline
    func wait() -> Outcome {
        for _ in 0..<Self.spins {
            if hasEnded.load(ordering: .acquiring) { break }
            yieldThread()
        }
        let semaphore = DispatchSemaphore(value: 0)
        let ended = waiting.withLock { waiting -> Outcome? in
            if case .ended(let outcome) = waiting { return outcome }
            waiting = .blocked(semaphore)
            return nil
        }
        if let ended { return ended }
        semaphore.wait()
        return waiting.withLock { waiting in
            guard case .ended(let outcome) = waiting else { preconditionFailure("a waiting caller woken too early") }
            return outcome
        }
    }

    /// Suspends the calling task, without blocking its thread, until its work is done.
    @usableFromInline
    func waitAsync() async {
        let outcome = await withUnsafeContinuation { continuation in
            let ended = waiting.withLock { waiting -> Outcome? in
                if case .ended(let outcome) = waiting { return outcome }
                waiting = .suspended(continuation)
                return nil
            }
            if let ended { continuation.resume(returning: ended) }
        }
        precondition(outcome == .done, "a suspended caller was handed the turn")
    }

    /// How many times a blocked caller yields before it parks.
    private static var spins: Int { 32 }
}
