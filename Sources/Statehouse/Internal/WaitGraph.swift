/// Which threads are blocked waiting for which store's worker, so that a wait that would close a cycle is not made.
///
/// A thread doing store A's work (a subscriber, say) may dispatch to store B while B's worker, on another thread,
/// dispatches to A: each would wait for the other for ever. Before a caller blocks, it follows the edges from the
/// store it would wait for — that store's worker, the store that thread is blocked on, its worker, … — and if they
/// lead back to itself, it queues its work without waiting, as a dispatch from inside a store's work is.
///
/// Sound because a cycle, once formed, is stable (every thread in it is blocked, and a blocked worker stays its
/// store's worker), and each caller registers its wait and checks for a cycle in one critical section of this
/// lock, under its store's lock: of the threads that close a cycle, the last to register sees it.
enum WaitGraph {
    /// The store each blocked thread waits for.
    private static let blocked = Locked<[UInt: any TurnTaking]>([:])

    /// Registers that `thread` will block until `store` lets it go, unless that closes a cycle.
    /// - Parameter firstWorker: The worker of `store` now, read under its lock.
    /// - Returns: `false`, registering nothing, if waiting would close a cycle.
    static func register(_ thread: UInt, waitingFor store: any TurnTaking, firstWorker: UInt) -> Bool {
        blocked.withLock { blocked in
            var next = firstWorker
            // Bounded by the number of blocked threads: a cycle not through `thread` cannot exist (it would be a
            // deadlock its last member refused to make).
            for _ in 0...blocked.count {
                if next == thread { return false }
                guard next != 0, let awaited = blocked[next] else { break }
                next = awaited.workerThread
            }
            blocked[thread] = store
            return true
        }
    }

    /// `thread` no longer waits.
    static func unregister(_ thread: UInt) {
        _ = blocked.withLock { $0.removeValue(forKey: thread) }
    }
}
