/// The taps of one store, by the id their ``StoreTap`` removes them with.
@usableFromInline
struct StoreTaps<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline typealias Tap = @Sendable (StoreEvent<State, Action>) -> Void

    private var byID: [UInt64: Tap] = [:]
    private var nextID: UInt64 = 0
    /// The taps in the order they were added, kept apart so that telling them copies one array.
    @usableFromInline private(set) var all: [Tap] = []

    mutating func add(_ tap: @escaping Tap) -> UInt64 {
        nextID += 1
        byID[nextID] = tap
        all = byID.sorted { $0.key < $1.key }.map(\.value)
        return nextID
    }

    mutating func remove(_ id: UInt64) {
        guard byID.removeValue(forKey: id) != nil else { return }
        all = byID.sorted { $0.key < $1.key }.map(\.value)
    }
}

/// A store's ``StoreTaps``, guarded by the store's state lock rather than a lock of their own: they are added,
/// removed and told only with that lock held (see `Store.tap(_:)`), so a lock of their own would never be contended,
/// and would cost each action a tap sees as much as the rest of the tap.
// @unchecked because `taps` is mutable without a lock of its own: every access holds the store's state lock, which
// orders them.
@usableFromInline
final class StoreTapList<State: Sendable, Action: Sendable>: @unchecked Sendable {
    @exclusivity(unchecked) @usableFromInline var taps = StoreTaps<State, Action>()

    @usableFromInline init() {}
}
