/// The registered listeners of one container or store: a slab whose slot numbers stay fixed, so removal is O(1).
///
/// An entry holds the listener (`body`) and the ``SubscriptionToken`` that guards its calls, without owning it.
///
/// The table is generic over the listener's argument, not over the listener's type: a function stored as a generic
/// parameter is kept at the most general calling convention, so every closure a caller passed to `observe` was
/// wrapped in a reabstraction thunk, 48 bytes more per subscription and one more call per delivery.
///
/// Each change is delivered to a copy of `entries` taken under the owner's lock when the change happens (copying an
/// array only retains its buffer), so a listener added later never receives it. Freed slots are reused before the
/// array grows. A table that empties keeps its array if small (a subscribe-and-cancel loop then allocates nothing) and
/// drops it if large, so that deliveries never walk thousands of empty slots left by a burst of listeners.
@usableFromInline
struct ObserverTable<Value> {
    /// A listener and its subscription, which the entry keeps allocated but not alive.
    ///
    /// A container's synchronous `observe` returns the subscription itself as the token, and letting the token go
    /// must cancel it: if the table owned it, it would never be let go. But a delivery walks a copy of the entries
    /// outside the lock, and may reach a subscription whose last reference went meanwhile. So the entry holds an
    /// `unowned(safe)` reference: the runtime keeps an object's memory allocated while such references remain, even
    /// once its `deinit` has run. The delivery then uses only the subscription's handshake, atomics that its `deinit`
    /// leaves readable: that `deinit` cancelled it first (or waited for the call in progress), so the delivery skips
    /// it.
    ///
    /// The reference is never loaded as such: that load checks that the object still lives, and traps if not. The
    /// entry reads the object's address instead (``subscription``; see `objectOfFirstUnownedReference`).
    ///
    /// A reference to the subscription itself is taken only where the subscription is known to live: held by its
    /// listener (``SubscriptionToken/isHeldByItsListener``), or by an ``OwningToken`` that cancels it before it lets
    /// go (every store subscription).
    @usableFromInline
    struct Entry {
        // First, at offset 0: `subscription` reads it there.
        @usableFromInline unowned(safe) let keptSubscription: SubscriptionToken
        @usableFromInline let body: @Sendable (Value) -> Void

        @inlinable
        init(subscription: SubscriptionToken, body: @escaping @Sendable (Value) -> Void) {
            self.keptSubscription = subscription
            self.body = body
        }

        /// The subscription, not retained: its memory is the entry's to keep, and it may have been deinitialized.
        @inlinable
        var subscription: Unmanaged<SubscriptionToken> {
            objectOfFirstUnownedReference(in: self, as: SubscriptionToken.self)
        }

        /// Whether the entry is `subscription`'s.
        @inlinable
        func holds(_ subscription: SubscriptionToken) -> Bool {
            self.subscription.toOpaque() == Unmanaged.passUnretained(subscription).toOpaque()
        }

        /// A cheap early check that the subscription was not cancelled (see ``SubscriptionToken/mayBeLive``).
        @inlinable
        var mayBeLive: Bool {
            subscription.withoutRetaining { $0.mayBeLive }
        }

        /// Hands `value` to the listener, guarded by its subscription's handshake.
        @inlinable
        func deliver(_ value: Value, on thread: UInt) {
            subscription.withoutRetaining { $0.deliver(on: thread) { body(value) } }
        }
    }

    @usableFromInline private(set) var entries: ContiguousArray<Entry?> = []
    @usableFromInline private(set) var freeSlots: [Int] = []
    @usableFromInline private(set) var count = 0

    @inlinable
    init() {}

    @inlinable
    var isEmpty: Bool { count == 0 }

    /// The slot the next ``insert(_:at:)`` must use: subscriptions are built knowing their slot.
    @inlinable
    var nextSlot: Int { freeSlots.last ?? entries.count }

    /// Adds `entry`, whose subscription was built for ``nextSlot``.
    ///
    /// - Complexity: O(1) amortized.
    @inlinable
    mutating func insert(_ entry: consuming Entry, at slot: Int) {
        precondition(slot == nextSlot, "a subscription must be inserted at the slot it was built for")
        if slot == entries.count {
            entries.append(entry)
        } else {
            freeSlots.removeLast()
            // `consume`: without it the entry is copied into the slot and the parameter destroyed after, a retain
            // and a release each of the subscription and of the listener's context.
            entries[slot] = consume entry
        }
        count += 1
    }

    /// Removes the entry of `subscription` from `slot` if it is still there; removing twice does nothing.
    ///
    /// - Returns: The entry, for the caller to let go once it has released its lock: the listener may hold the last
    ///   reference to another token of the same owner, whose cancellation takes that lock.
    /// - Complexity: O(1) amortized.
    @inlinable
    mutating func remove(_ subscription: SubscriptionToken, at slot: Int) -> Entry? {
        guard slot < entries.count else { return nil }
        // Borrowed in place (see `notifyListeners`): `entries[slot]?.subscription` copied the entry, a retain and a
        // release of its subscription and of its listener's context.
        switch entries[slot] {
        case .some(let entry) where entry.holds(subscription): break
        default: return nil
        }
        let removed = entries[slot].take()
        count -= 1
        if count == 0 && entries.count > 64 {
            entries = []
            freeSlots = []
        } else {
            freeSlots.append(slot)
        }
        return removed
    }

    /// Empties the table and returns its entries, which keep their subscriptions' memory (see ``Entry``).
    mutating func removeAll() -> ContiguousArray<Entry?> {
        defer {
            entries = []
            freeSlots = []
            count = 0
        }
        return entries
    }
}

extension ObserverTable: Sendable where Value: Sendable {}
extension ObserverTable.Entry: Sendable where Value: Sendable {}
