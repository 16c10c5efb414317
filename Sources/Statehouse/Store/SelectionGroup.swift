/// Subscribers that select the same thing from a store's state, and the last selection they were shown.
///
/// Subscribers of one key path share a group, so a dispatch compares each selected key path once however many views
/// watch it: 1,000 subscribers over 10 fields cost 10 comparisons when nothing they watch changed.
@usableFromInline
struct SelectionGroup<State: Sendable>: Sendable {
    @usableFromInline typealias Listener = @Sendable (State) -> Void

    /// Selects from `state`, compares with the last selection and remembers the new one; returns whether it changed.
    /// Called only with the store's lock held.
    @usableFromInline let refresh: @Sendable (State) -> Bool
    /// What the group is shared under, or `nil` for a selection of its own.
    @usableFromInline let key: SelectionKey?
    @usableFromInline var subscribers = ObserverTable<Listener>()

    @inlinable
    init(key: SelectionKey?, refresh: @escaping @Sendable (State) -> Bool) {
        self.key = key
        self.refresh = refresh
    }
}

/// The key path subscribers share a selection group under. Key paths compare equal when they lead to the same
/// property, even when written at different places.
@usableFromInline
struct SelectionKey: Hashable, Sendable {
    @usableFromInline let keyPath: any AnyKeyPath & Sendable

    @inlinable
    init(_ keyPath: any AnyKeyPath & Sendable) {
        self.keyPath = keyPath
    }

    @inlinable
    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.keyPath == rhs.keyPath
    }

    @inlinable
    func hash(into hasher: inout Hasher) {
        hasher.combine(keyPath)
    }
}

/// The last value a group selected. A class, so that the group's `refresh` closure can update it.
// @unchecked: `value` is only read and written with the store's lock held (in `refresh`, and when a group is made).
@usableFromInline final class LastSelection<Value>: @unchecked Sendable {
    @usableFromInline var value: Value

    @inlinable
    init(_ value: Value) {
        self.value = value
    }
}

extension SelectionGroup {
    /// A group that remembers the selection of `select` and reports a change when `isDuplicate` says the new one
    /// differs.
    @inlinable
    static func selecting<Value>(
        _ select: @escaping @Sendable (State) -> Value,
        from state: State,
        key: SelectionKey?,
        isDuplicate: @escaping @Sendable (Value, Value) -> Bool
    ) -> Self {
        let last = LastSelection(select(state))
        return Self(key: key) { state in
            let selection = select(state)
            if isDuplicate(last.value, selection) { return false }
            last.value = selection
            return true
        }
    }
}
