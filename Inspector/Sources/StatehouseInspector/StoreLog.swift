/// A store's log as the inspector keeps it: the last entries (a ``Ring``), the state before the oldest and after the
/// newest as trees, and, for a store the page may move, the state values themselves. The logic, apart from the
/// locking (see ``InspectedStore``).
struct StoreLog<State: Sendable>: Sendable {
    struct Held: Sendable {
        var entry: LogEntry
        /// The state after the entry, kept only where jumps are allowed.
        let state: State?
    }

    private var held: Ring<Held>
    /// The state before the oldest entry held.
    private(set) var base: JSONTree
    /// The state after the newest entry.
    private(set) var latest: JSONTree
    private(set) var lastStep = 0

    /// - Parameter step: The step `initial` is the state after: the log's first entry is the next one.
    init(capacity: Int, initial: JSONTree, after step: Int = 0) {
        held = Ring(capacity: capacity)
        base = initial
        latest = initial
        lastStep = step
    }

    var entries: [LogEntry] { held.elements.map(\.entry) }

    /// The step of the oldest entry held, or the next step if none is.
    var firstStep: Int { held.elements.first?.entry.step ?? lastStep + 1 }

    /// How many steps the ring no longer holds.
    var droppedSteps: Int { firstStep - 1 }

    /// Appends the entry for the step after ``lastStep``, which led to `tree`; the oldest entry goes if the ring is
    /// full, and the base moves past it.
    mutating func append(_ entry: LogEntry, leading tree: JSONTree, state: State?) {
        precondition(entry.step == lastStep + 1, "Steps are appended in order.")
        if let oldest = held.append(Held(entry: entry, state: state)) {
            base = base.applying(oldest.entry.changes)
        }
        latest = tree
        lastStep = entry.step
    }

    /// The state after `step` (the state before the oldest entry for `firstStep - 1`), or `nil` if the log holds no
    /// such step.
    func tree(afterStep step: Int) -> JSONTree? {
        guard (firstStep - 1...lastStep).contains(step) else { return nil }
        if step == lastStep { return latest }
        return base.applying(held.elements.prefix(step - firstStep + 1).flatMap(\.entry.changes))
    }

    /// The state value after `step`, where one is kept.
    func state(afterStep step: Int) -> State? {
        held.elements.first { $0.entry.step == step }?.state
    }

    /// The entries whose id is past `id`.
    func entries(after id: UInt64) -> [LogEntry] {
        held.elements.lazy.map(\.entry).filter { $0.id > id }
    }
}
