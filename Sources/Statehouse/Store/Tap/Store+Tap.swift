import Synchronization

extension Store {
    /// Calls `tap` with every action the store applies and every whole replacement of its state, each with the
    /// state it left, in order, until the returned ``StoreTap`` is cancelled or let go: what a debugging tool such
    /// as StatehouseInspector's `Inspector` watches a store with.
    ///
    /// `tap` runs on the store's worker with the state locked, so that it sees exactly the store's sequence of
    /// states: it must only copy what it is given and queue it (no reading of the store, no waiting). A store
    /// that is not tapped pays one atomic load per action for this. Tap a root store: a scoped store's actions are
    /// its parent's.
    ///
    /// - Returns: What keeps the tap in place, and the state when it was added, which its first event follows.
    public func tap(
        _ tap: @escaping @Sendable (StoreEvent<State, Action>) -> Void
    ) -> (tap: StoreTap, state: State) {
        // Added under the state lock, as actions are applied: the tap's first event follows the state read with it.
        // A scoped store that does not follow its parent holds no state of its own: it reads its parent's.
        let (id, held) = core.withLock { core in (recorder.addTap(tap), core.followedState) }
        let state = held ?? self.state
        // Removed under the state lock too: once `cancel` returns, no call of the tap is under way.
        let removal = StoreTap { [weak self] in
            guard let self else { return }
            core.withLock { _ in recorder.removeTap(id) }
        }
        return (removal, state)
    }

    /// Shows `state` as the store's state, for debugging a store that is not persisted: subscribers are told as for
    /// any change, and actions dispatched afterwards apply to it. The store's taps see a ``StateReplacement/travel``.
    ///
    /// - Throws: ``TimeTravelError/persisted`` for a store that writes its state to a storage (the state would be
    ///   written, and other processes would take it), ``TimeTravelError/notRecording`` for a scoped store.
    public func jump(to state: State) throws(TimeTravelError) {
        guard case .root(let root) = role else { throw .notRecording }
        guard root.persistence == nil else { throw .persisted }
        replaceState(state)
    }

    /// Whether the store writes its state to a storage (``jump(to:)`` refuses such a store).
    public var isPersisted: Bool { persistence != nil }

    /// Whether the store is a scoped store, a view of part of its parent's state (``scope(state:action:fileID:line:column:)``):
    /// its actions are applied by its root, whose taps see them, not its own.
    public var isScoped: Bool {
        if case .scope = role { true } else { false }
    }

    /// Calls `body` with every state a fresh store with this store's reducer goes through when it applies
    /// `recording`'s actions to its initial state, without effects: step 0, the initial state, then the state after
    /// each action. One state at a time, so that a long recording costs the memory of one state. The store itself
    /// does not change.
    ///
    /// - Throws: ``TimeTravelError/notRecording`` for a scoped store, which has no reducer of its own.
    public func forEachState(
        replaying recording: Recording<State, Action>, _ body: (_ step: Int, _ state: State) -> Void
    ) throws(TimeTravelError) {
        guard case .root(let root) = role else { throw .notRecording }
        var state = recording.initialState
        body(0, state)
        for (index, recorded) in recording.actions.enumerated() {
            _ = root.reducer(&state, recorded.action)
            body(index + 1, state)
        }
    }
}

/// Keeps a ``Store/tap(_:)`` in place: cancel it, or let it go, to remove the tap.
public final class StoreTap: Sendable {
    private let removal: Mutex<(@Sendable () -> Void)?>

    init(removal: @escaping @Sendable () -> Void) {
        self.removal = Mutex(removal)
    }

    /// Removes the tap: once this returns, it is not called, nor being called. Not from inside the tap, which runs
    /// with the store's state locked.
    public func cancel() {
        removal.withLock { removal in
            defer { removal = nil }
            return removal
        }?()
    }

    deinit { cancel() }
}
