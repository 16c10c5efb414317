/// Subscribers that select the same thing from a store's state, and the last selection they were shown.
///
/// Subscribers of one key path share a group, so a dispatch compares each selected key path once however many views
/// watch it: 1,000 subscribers over 10 fields cost 10 comparisons when nothing they watch changed.
///
/// A class, though only ``StoreState`` holds it: a dispatch walks every group, and a struct of four references was
/// copied at each step (five retains and six releases per group, a third of a dispatch's work with 10 groups). A
/// reference is retained once, and a subscriber is added to its table in place.
@usableFromInline
// @unchecked Sendable is safe: `subscribers` is the only `var`, and it is read and written only while the group is
// in a ``StoreState``'s `groups`, which its store's state lock guards (`Store.core`). A group taken out of them
// (`StoreState.Removal.ownGroup`, carried out of the lock to be let go there) is in no table any more, and nothing
// reads or writes its `subscribers` again; its `let`s are `Sendable`.
final class SelectionGroup<State: Sendable>: @unchecked Sendable {
    @usableFromInline typealias Listener = @Sendable (State) -> Void
    @usableFromInline typealias Refresh = @Sendable (State) -> Bool

    /// Selects from `state`, compares with the last selection and remembers the new one; returns whether it changed.
    /// Called only with the store's lock held.
    @usableFromInline let refresh: Refresh
    /// The last selection: a ``LastSelection`` of the selected type, which the group's listeners deliver, so that a
    /// change is selected once, by `refresh`, however many subscribers hear of it.
    @usableFromInline let selection: any AnyObject & Sendable
    /// What the group is shared under, or `nil` for a selection of its own.
    @usableFromInline let key: SelectionKey?
    /// Unchecked: the store's lock already makes every access exclusive, and the runtime's checks of a class's
    /// `var` cost a dispatch about 30 instructions per group.
    @exclusivity(unchecked) @usableFromInline var subscribers = ObserverTable<State>()

    @inlinable
    init(key: SelectionKey?, selection: any AnyObject & Sendable, refresh: @escaping @Sendable (State) -> Bool) {
        self.key = key
        self.selection = selection
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

/// The last value a group selected. A class, so that the group's `refresh` closure can update it and its listeners
/// read it.
// @unchecked: `value` is written only on the store's processor (the one thread at a time that does the store's work,
// handed from thread to thread by the inbox: under its lock, or by its atomic claim and give-back, which acquire and
// release), with the state lock held: in `refresh` and when a group is made. It is read there, and by the group's
// listeners, which the processor calls with the round of that refresh before it does any other work of the store, so
// before the next write.
@usableFromInline final class LastSelection<Value>: @unchecked Sendable {
    /// Unchecked: the processor alone touches it (see above), and the runtime's exclusivity checks of a class's `var`
    /// cost about 30 instructions per group and dispatch.
    @exclusivity(unchecked) @usableFromInline var value: Value

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
    ) -> SelectionGroup {
        let last = LastSelection(select(state))
        return SelectionGroup(key: key, selection: last) { state in
            let selection = select(state)
            if isDuplicate(last.value, selection) { return false }
            last.value = selection
            return true
        }
    }
}
