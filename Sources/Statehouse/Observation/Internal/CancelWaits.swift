import Synchronization

/// The threads waiting in ``SubscriptionToken/cancel()`` for a call on another thread, and what they wait for:
/// enough to see a cycle of waits (two listeners cancelling each other) when the wait that would close it begins.
final class CancelWaits: Sendable {
    static let shared = CancelWaits()

    private let waiting = Locked<[UInt: SubscriptionToken]>([:])

    /// Records that `thread` waits for the call of `subscription`; `false`, recording nothing, if the thread in that
    /// call waits, directly or through others, for `thread`.
    func begin(_ thread: UInt, waitingFor subscription: SubscriptionToken) -> Bool {
        waiting.withLock { waiting in
            var next = subscription.callingThread.load(ordering: .sequentiallyConsistent)
            var steps = 0
            while next != 0, steps < waiting.count + 1 {
                if next == thread { return false }
                guard let awaited = waiting[next] else { break }
                next = awaited.callingThread.load(ordering: .sequentiallyConsistent)
                steps += 1
            }
            waiting[thread] = subscription
            return true
        }
    }

    func end(_ thread: UInt) {
        _ = waiting.withLock { $0.removeValue(forKey: thread) }
    }

    /// Whether `thread` is waiting in a `cancel()` for a call that lasts: how a test knows a cancellation blocks.
    func isWaiting(_ thread: UInt) -> Bool {
        waiting.withLock { $0[thread] != nil }
    }
}
