/// A value to deliver, and to whom: the unit of work of a container's or a store's deliverer.
@usableFromInline
struct DeliveryRound<Value: Sendable>: Sendable {
    @usableFromInline typealias Entry = ObserverTable<Value>.Entry

    @usableFromInline
    enum Kind: Sendable {
        /// A change, for the listeners registered when it happened (a container's listeners).
        case change(ContiguousArray<Entry?>)
        /// A change, for several groups of listeners (a store's selection groups whose selection changed).
        case changes([ContiguousArray<Entry?>])
        /// The value at subscription time, for the one listener that asked for it.
        case initial(Entry)
        /// A container's change that a later one replaced in the queue: nobody is told. The thread that queued the
        /// later change lets it go once it has released the lock, since it may hold the last reference to a removed
        /// listener, which may hold the last reference to a token of the same container (see `ObserverTable.remove`).
        case superseded(ContiguousArray<Entry?>)
    }

    @usableFromInline let value: Value
    @usableFromInline let kind: Kind

    @inlinable
    init(value: Value, kind: Kind) {
        self.value = value
        self.kind = kind
    }

    /// Whether this round is a change for every listener (which a later change supersedes), not a first value.
    @inlinable
    var isChange: Bool {
        if case .change = kind { true } else { false }
    }

    /// Whether this round only carries a superseded change out of the lock, to be let go there.
    @inlinable
    var isSuperseded: Bool {
        if case .superseded = kind { true } else { false }
    }

    @inlinable
    func deliver(on thread: UInt) {
        switch kind {
        case .change(let listeners):
            notifyListeners(of: value, in: listeners, on: thread)
        case .changes(let groups):
            for listeners in groups {
                notifyListeners(of: value, in: listeners, on: thread)
            }
        case .initial(let entry):
            entry.deliver(value, on: thread)
        case .superseded:
            break
        }
    }
}
