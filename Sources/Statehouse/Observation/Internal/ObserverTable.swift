/// The registered listeners of one container or store: a slab whose slot numbers stay fixed, so removal is O(1).
///
/// An entry holds the listener (`body`) and the ``Subscription`` that guards its calls.
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
    @usableFromInline
    struct Entry {
        @usableFromInline let subscription: Subscription
        @usableFromInline let body: @Sendable (Value) -> Void

        @inlinable
        init(subscription: Subscription, body: @escaping @Sendable (Value) -> Void) {
            self.subscription = subscription
            self.body = body
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
            // `consume`: without it the entry was copied into the slot and the parameter destroyed after, a retain
            // and a release each of the subscription and of the listener's context (92 of 1,359 instructions).
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
    mutating func remove(_ subscription: Subscription, at slot: Int) -> Entry? {
        guard slot < entries.count else { return nil }
        // Borrowed in place (see `notifyListeners`): `entries[slot]?.subscription` copied the entry, a retain and a
        // release of its subscription and of its listener's context.
        switch entries[slot] {
        case .some(let entry) where entry.subscription === subscription: break
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

    /// Empties the table and returns the subscriptions it held.
    mutating func removeAll() -> [Subscription] {
        let subscriptions = entries.compactMap { $0?.subscription }
        entries = []
        freeSlots = []
        count = 0
        return subscriptions
    }
}

extension ObserverTable: Sendable where Value: Sendable {}
extension ObserverTable.Entry: Sendable where Value: Sendable {}
