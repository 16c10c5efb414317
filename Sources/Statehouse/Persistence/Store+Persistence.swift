import Foundation

extension Store where State: Codable {
    /// Creates a store whose state is loaded from `storage` and saved after every action that changed it.
    ///
    /// Loading, saving, bad data and failures behave as for a persisted container; see
    /// <doc:PersistingState>. An optional `State` that becomes `nil` removes the stored entry; a ``VersionedState``
    /// is stored in its versioned envelope and migrated when older.
    ///
    /// - Parameters:
    ///   - initialState: The state when nothing (decodable) is stored.
    ///   - key: The state's entry in `storage`.
    ///   - storage: Where the state lives.
    ///   - writes: When changes are written.
    ///   - externalChanges: On a ``ChangeDetectingStorage`` (files, SQLite), whether and how to follow changes
    ///     others made; the state stored by another process replaces this store's state (subscribers are told,
    ///     nothing is written back, no action is recorded). By default the storage says when they happen
    ///     (``ExternalChanges/watch``), with a poll every 5 seconds as the safety net.
    ///   - reducer: Applies an action to the state, and says what to do next.
    ///   - middleware: Sees every action before the reducer, the first outermost.
    @_disfavoredOverload  // as for the store without storage: reducers that return nothing pick the `Void` variant
    public convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .watch,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState, key: key, storage: storage, codec: .json, writes: writes,
            externalChanges: externalChanges, reducer: reducer, middleware: middleware
        )
    }

    /// Creates a persisted store that applies actions with a composed ``Reducer``, such as an ``Undoable`` state's
    /// (``Reducer/undoable(_:)``).
    public convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .watch,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState, key: key, storage: storage, codec: .json, writes: writes,
            externalChanges: externalChanges, reducer: reducer.reduce, middleware: middleware
        )
    }

    /// Creates a persisted store whose reducer only changes the state.
    public convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .watch,
        reducer: @escaping @Sendable (inout State, Action) -> Void,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState, key: key, storage: storage, codec: .json, writes: writes,
            externalChanges: externalChanges, reducer: Self.withoutEffects(reducer), middleware: middleware
        )
    }
}

extension Store where State: VersionedState {
    /// Creates a persisted store of a versioned state: stored in its versioned envelope, migrated when older, and
    /// followed in its current shape whichever version another process stored. Everything else is as for any
    /// persisted store; see ``VersionedState``.
    @_disfavoredOverload
    public convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .watch,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState, key: key, storage: storage, codec: .versioned, writes: writes,
            externalChanges: externalChanges, reducer: reducer, middleware: middleware
        )
    }

    /// Creates a persisted store of a versioned state that applies actions with a composed ``Reducer``.
    public convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .watch,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState, key: key, storage: storage, codec: .versioned, writes: writes,
            externalChanges: externalChanges, reducer: reducer.reduce, middleware: middleware
        )
    }

    /// Creates a persisted store of a versioned state whose reducer only changes the state.
    public convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .watch,
        reducer: @escaping @Sendable (inout State, Action) -> Void,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState, key: key, storage: storage, codec: .versioned, writes: writes,
            externalChanges: externalChanges, reducer: Self.withoutEffects(reducer), middleware: middleware
        )
    }
}

extension Store {
    /// The wiring every persisted store shares; `clock` times coalesced writes and outside-change checks.
    convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        codec: StateCodec<State>,
        writes: WritePolicy,
        externalChanges: ExternalChanges,
        clock: any Clock<Duration> = ContinuousClock(),
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        middleware: [Middleware<State, Action>]
    ) {
        let (state, persistence) = StatePersistence.load(
            key: key, storage: storage, default: initialState, codec: codec, writes: writes,
            externalChanges: externalChanges, clock: clock
        )
        self.init(
            state: state,
            role: .root(RootParts(reducer: reducer, persistence: persistence)),
            pipeline: Middleware.chain(middleware) { store, action in store.apply(action, with: reducer) }
        )
        persistence.start(owner: self)
    }

    /// A reducer that returns no effect, from one that only changes the state.
    static func withoutEffects(
        _ reducer: @escaping @Sendable (inout State, Action) -> Void
    ) -> @Sendable (inout State, Action) -> Effect<Action> {
        { state, action in
            reducer(&state, action)
            return .none
        }
    }
}

extension Store: PersistenceOwner {
    func changeCountReader() -> @Sendable () -> OwnerChangeCount {
        readingItself { $0.core.withLockIfAvailable { $0.changeCount } }
    }

    /// Queued behind the actions already submitted, so that the state another process stored is taken between two
    /// actions, never in the middle of one.
    func takeStoredValue(_ newState: State, ifUnchangedSince count: UInt64, refused: @escaping @Sendable () -> Void) {
        submit(.takeStoredState(newState, ifUnchangedSince: count, refused: refused))
    }
}

extension Store {
    /// Writes the unsaved state to the storage now. Does nothing for a store without storage.
    ///
    /// It writes every change committed before it was called, also one whose `dispatch` has not returned yet. Once
    /// it returns, ``storageError`` tells how the last write went, this one or one made just before.
    ///
    /// - Throws: ``StorageError`` if the write failed; the state stays unsaved and is tried again later.
    public func flush() throws(StorageError) {
        guard let persistence else { return }
        // A dispatch tells the persistence of its change after it leaves the state's lock: one between the two
        // would be missed. Told here too, under the count it has; the persistence keeps the newest it is told of.
        // Tried rather than waited for: a flush from code that runs under that lock (a reducer) would wait for
        // itself; a change whose lock is held is not committed yet, and need not be written.
        if let (state, count) = committedState() { persistence.changed(state, count: count) }
        try persistence.flush()
    }

    /// The state and its count as last committed, if the state's lock is free within a few tries.
    private func committedState() -> (State, UInt64)? {
        for _ in 0..<100 {
            if let committed = core.withLockIfAvailable({ core in core.followedState.map { ($0, core.changeCount) } }) {
                return committed
            }
            sched_yield()
        }
        return nil
    }

    /// For a persisted store, the last storage failure (`nil` once a write succeeds); `nil` without storage.
    public var storageError: StateContainer<StorageError?>? {
        persistence?.lastError
    }
}
