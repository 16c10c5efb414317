import Synchronization

/// The side table behind ``AssociatedObjects``, shared by the whole process.
///
/// Entries are found by the owner's `ObjectIdentifier` and hold the owner weakly. That weak reference is what makes
/// the table safe on a runtime without associated objects:
///
/// - **Address reuse.** An object allocated where a dead one lived has the same identifier. The entry's weak owner is
///   `nil` by then (weak references are cleared when an object starts to deinitialize, before its memory can be
///   reused), so the new object finds a stale entry, which is dropped: it never sees the old object's values.
/// - **Release.** Swift gives no hook into another object's deinitialization, so a dead owner's values stay in the
///   table until one of these, whichever comes first: an object at the same address touches its associated values;
///   the next *sweep*, which runs when as many owners have been added since the last sweep as were alive after it
///   (at least 16), keeping the table's size within twice the live owners; or ``releaseDeadOwners()``.
public final class AssociatedObjectsTable: Sendable {
    /// The table every ``AssociatedObjects`` object uses.
    public static let shared = AssociatedObjectsTable()

    // @unchecked: values are only handed back to the code that stored them, under the table's lock or after it;
    // the table never reads or calls them. Associated values are the caller's to make thread-safe.
    enum Stored: @unchecked Sendable {
        case strong(Any)
        case weak(WeakBox)

        var value: Any? {
            switch self {
            case .strong(let value): value
            case .weak(let box): box.object
            }
        }
    }

    private let entries = Locked(Entries())
    private let keyCounter = Atomic<Int>(0)

    init() {}

    /// How many owners have values in the table now, dead ones not yet released included.
    public var ownerCount: Int {
        entries.withLock { $0.byOwner.count }
    }

    /// Releases the values of every owner that has been deallocated; returns how many owners that was.
    @discardableResult
    public func releaseDeadOwners() -> Int {
        entries.withLock { $0.sweep() }.count
    }

    func newKeyID() -> Int {
        keyCounter.add(1, ordering: .relaxed).newValue
    }

    func value(of owner: AnyObject, for key: Int) -> Any? {
        entries.withLock { $0.stored(of: owner, for: key) }?.value
    }

    /// Stores `value` unless a live value is stored under `key` already; returns the value the owner now has.
    func setIfAbsent(_ value: Stored, of owner: AnyObject, for key: Int) -> Any? {
        let (current, dropped) = entries.withLock { entries -> (Any?, [Entries.Entry]) in
            if let existing = entries.stored(of: owner, for: key), let live = existing.value { return (live, []) }
            return (value.value, entries.set(value, of: owner, for: key))
        }
        withExtendedLifetime(dropped) {}
        return current
    }

    func set(_ value: Stored?, of owner: AnyObject, for key: Int) {
        // Values replaced or released are dropped after the lock is released: their deinitializers may use the table.
        let dropped = entries.withLock { $0.set(value, of: owner, for: key) }
        withExtendedLifetime(dropped) {}
    }
}

/// The table's logic, without the locking.
// @unchecked: owned by `AssociatedObjectsTable`'s lock; see `Stored`.
struct Entries: @unchecked Sendable {
    // @unchecked: see `Entries`; the owner is only compared and checked for `nil`.
    struct Entry: @unchecked Sendable {
        weak var owner: AnyObject?
        var values: [Int: AssociatedObjectsTable.Stored]
    }

    private(set) var byOwner: [ObjectIdentifier: Entry] = [:]
    private var addedSinceSweep = 0
    private var liveAfterSweep = 0

    func stored(of owner: AnyObject, for key: Int) -> AssociatedObjectsTable.Stored? {
        guard let entry = byOwner[ObjectIdentifier(owner)], entry.owner === owner else { return nil }
        return entry.values[key]
    }

    /// Stores `value`; returns what the table let go of, for the caller to release outside the lock.
    mutating func set(_ value: AssociatedObjectsTable.Stored?, of owner: AnyObject, for key: Int) -> [Entry] {
        let id = ObjectIdentifier(owner)
        var dropped: [Entry] = []
        var entry: Entry
        if let existing = byOwner[id], existing.owner === owner {
            entry = existing
        } else {
            if let stale = byOwner.removeValue(forKey: id) { dropped.append(stale) }  // a dead object's, same address
            guard value != nil else { return dropped }
            entry = Entry(owner: owner, values: [:])
            addedSinceSweep += 1
            if addedSinceSweep >= max(16, liveAfterSweep) { dropped += sweep() }
        }
        let previous = value.map { entry.values.updateValue($0, forKey: key) } ?? entry.values.removeValue(forKey: key)
        if let previous { dropped.append(Entry(owner: nil, values: [key: previous])) }
        byOwner[id] = entry
        return dropped
    }

    /// Removes the entries of dead owners and returns them.
    mutating func sweep() -> [Entry] {
        let dead = byOwner.filter { $0.value.owner == nil }
        for id in dead.keys { byOwner[id] = nil }
        addedSinceSweep = 0
        liveAfterSweep = byOwner.count
        return Array(dead.values)
    }
}

/// A weak reference that may cross threads.
// @unchecked: the reference is only loaded, which the Swift runtime makes thread-safe.
final class WeakBox: @unchecked Sendable {
    weak let object: AnyObject?

    init(_ object: AnyObject) {
        self.object = object
    }
}
