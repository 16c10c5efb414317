/// The registered observers of one container or store: a slab whose slot numbers stay fixed, so removal is O(1).
///
/// Each entry remembers the version that was current when it was added: a change with that version or an older one
/// is not delivered to it, which keeps an observer added during a delivery from receiving a change from before it
/// existed (and from receiving the initial value twice).
///
/// Delivery iterates a copy of `entries` taken under the owner's lock; copying an array only retains its buffer.
struct ObserverTable<Observer: AnyObject> {
    struct Entry {
        let observer: Observer
        let since: UInt64
    }

    private(set) var entries: ContiguousArray<Entry?> = []
    private var freeSlots: [Int] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// The slot the next ``insert(_:at:since:)`` must use.
    var nextSlot: Int { freeSlots.last ?? entries.count }

    /// Adds `observer`, which was built for ``nextSlot``.
    ///
    /// - Complexity: O(1) amortized.
    mutating func insert(_ observer: Observer, at slot: Int, since version: UInt64) {
        precondition(slot == nextSlot, "an observer must be inserted at the slot it was built for")
        if freeSlots.last == slot { freeSlots.removeLast() }
        if slot == entries.count {
            entries.append(Entry(observer: observer, since: version))
        } else {
            entries[slot] = Entry(observer: observer, since: version)
        }
        count += 1
    }

    /// Removes `observer` from `slot` if it is still there; removing twice does nothing.
    ///
    /// - Complexity: O(1) amortized.
    mutating func remove(_ observer: Observer, at slot: Int) {
        guard slot < entries.count, entries[slot]?.observer === observer else { return }
        entries[slot] = nil
        count -= 1
        if count == 0 {
            entries.removeAll(keepingCapacity: true)
            freeSlots.removeAll(keepingCapacity: true)
        } else {
            freeSlots.append(slot)
        }
    }

    /// Empties the table and returns the observers it held.
    mutating func removeAll() -> [Observer] {
        let observers = entries.compactMap { $0?.observer }
        entries = []
        freeSlots = []
        count = 0
        return observers
    }
}

extension ObserverTable: Sendable where Observer: Sendable {}
extension ObserverTable.Entry: Sendable where Observer: Sendable {}
