/// The taps of one store, by the id their ``StoreTap`` removes them with.
struct StoreTaps<State: Sendable, Action: Sendable>: Sendable {
    typealias Tap = @Sendable (StoreEvent<State, Action>) -> Void

    private var byID: [UInt64: Tap] = [:]
    private var nextID: UInt64 = 0
    /// The taps in the order they were added, kept apart so that telling them copies one array.
    private(set) var all: [Tap] = []

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
