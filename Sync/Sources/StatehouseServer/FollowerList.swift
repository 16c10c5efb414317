import NIOCore

/// The followers of a feed, each under its own number, and whether the feed may be followed: a server whose log it
/// does not follow closes its feeds (see `StatehouseServerPostgres`). Kept under its feed's lock.
struct FollowerList<Follower> {
    private(set) var all: [UInt64: Follower] = [:]
    private var next: UInt64 = 0
    private(set) var isOpen: Bool

    init(isOpen: Bool) {
        self.isOpen = isOpen
    }

    /// Adds `follower`; returns its number, or `nil` while the feed is closed.
    mutating func add(_ follower: Follower) -> UInt64? {
        guard isOpen else { return nil }
        defer { next += 1 }
        all[next] = follower
        return next
    }

    var count: Int {
        all.count
    }

    mutating func remove(_ id: UInt64) {
        all.removeValue(forKey: id)
    }

    mutating func open() {
        isOpen = true
    }

    /// Closes the feed; returns the followers it had, for their streams to be ended outside the lock.
    mutating func close() -> [Follower] {
        isOpen = false
        defer { all = [:] }
        return Array(all.values)
    }
}

/// What ends the feed of the follower numbered `id`: its events end and `remove` takes it from its list. A feed that
/// was closed when it was followed (`id` is `nil`) ends at once.
func feedEnd(
    for id: UInt64?, of events: AsyncStream<ByteBuffer>.Continuation, remove: @escaping @Sendable (UInt64) -> Void
) -> @Sendable () -> Void {
    guard let id else {
        events.finish()
        return {}
    }
    return {
        events.finish()
        remove(id)
    }
}
