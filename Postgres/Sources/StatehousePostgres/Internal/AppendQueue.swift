import NIOCore

/// The actions a replicated store has yet to get into its log, in order, and who waits for them: the logic of the
/// ``Replicator``'s appending, without locks, connections or threads.
struct AppendQueue: Sendable {
    struct Pending: Sendable {
        let local: Int64
        let action: ByteBuffer
    }

    /// Not yet known to be in the log, oldest first.
    private(set) var pending: [Pending] = []
    private var nextLocal: Int64 = 1
    /// Waiters of actions not yet applied here, by local number.
    private var waiters: [Int64: AppliedWaiter] = [:]

    /// Adds `action` at the end; returns its local number.
    mutating func enqueue(_ action: ByteBuffer, waiter: AppliedWaiter?) -> Int64 {
        let local = nextLocal
        nextLocal += 1
        pending.append(Pending(local: local, action: action))
        if let waiter { waiters[local] = waiter }
        return local
    }

    /// The oldest `count` actions, or fewer if fewer are pending.
    func batch(_ count: Int) -> ArraySlice<Pending> {
        pending.prefix(count)
    }

    /// The oldest `count` actions are in the log: their waiters wait on for them to be applied.
    mutating func appended(_ count: Int) {
        pending.removeFirst(min(count, pending.count))
    }

    /// The oldest `count` actions will never be in the log: returns their waiters, to be told why.
    mutating func failed(_ count: Int) -> [AppliedWaiter] {
        let gone = pending.prefix(count)
        pending.removeFirst(gone.count)
        return gone.compactMap { waiters.removeValue(forKey: $0.local) }
    }

    /// This store's action number `local` was applied here: returns its waiter.
    mutating func applied(local: Int64) -> AppliedWaiter? {
        waiters.removeValue(forKey: local)
    }
}
