/// A store's taps, in the order they were added, each with the id its ``StoreTap`` removes it by.
///
/// Guarded by the store's state lock rather than a lock of its own: taps are added, removed and told only with that
/// lock held (see `Store.tap(_:)`), so a lock of their own would never be contended, and would cost each action a tap
/// sees as much as the rest of the tap.
@usableFromInline
// @unchecked Sendable, safe because every read and write of `all` and `lastID` happens with the store's state lock
// held (`Store.tap(_:)` adds, `StoreTap.cancel()` removes, the recorder reads while the store applies an action), and
// that lock orders them; the list has no lock of its own for the reason above.
final class StoreTaps<State: Sendable, Action: Sendable>: @unchecked Sendable {
    @usableFromInline typealias Tap = @Sendable (StoreEvent<State, Action>) -> Void

    @exclusivity(unchecked) @usableFromInline private(set) var all: [(id: UInt64, tap: Tap)] = []
    @exclusivity(unchecked) private var lastID: UInt64 = 0

    @usableFromInline init() {}

    func add(_ tap: @escaping Tap) -> UInt64 {
        lastID += 1
        all.append((lastID, tap))
        return lastID
    }

    func remove(_ id: UInt64) {
        all.removeAll { $0.id == id }
    }
}
