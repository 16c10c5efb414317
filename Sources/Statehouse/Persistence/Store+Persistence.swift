import Foundation

extension Store where State: Codable {
    /// Creates a store whose state is loaded from `storage` and saved after every action that changed it.
    ///
    /// Loading, saving, bad data and failures behave as for a persisted container; see
    /// <doc:PersistingState>.
    ///
    /// - Parameters:
    ///   - initialState: The state when nothing (decodable) is stored.
    ///   - key: The state's entry in `storage`.
    ///   - storage: Where the state lives.
    ///   - writes: When changes are written.
    ///   - externalChanges: On a ``ChangeDetectingStorage`` (files, SQLite), whether and how often to look for
    ///     changes others made; the state stored by another process replaces this store's state (subscribers are
    ///     told, nothing is written back, no action is recorded). Polls four times a second by default.
    ///   - reducer: Applies an action to the state, and says what to do next.
    ///   - middleware: Sees every action before the reducer, the first outermost.
    @_disfavoredOverload  // as for the store without storage: reducers that return nothing pick the `Void` variant
    public convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .poll,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        middleware: [Middleware<State, Action>] = []
    ) {
        let loaded = LoadedValue(key: key, storage: storage, default: initialState)
        let persistence = StatePersistence<State>(
            storage: storage, key: key, initialValue: loaded.value, policy: writes, canWrite: loaded.canWrite,
            externalChanges: externalChanges,
            decode: { try JSONDecoder().decode(State.self, from: $0) },
            encode: { try JSONEncoder.statehouse.encode($0) }
        )
        self.init(
            state: loaded.value,
            reducer: reducer,
            pipeline: Middleware.chain(middleware) { store, action in store.apply(action, with: reducer) },
            forward: nil,
            serializer: nil,
            persistence: persistence
        )
        persistence.attach(StatePersistence.Owner(
            changeCount: { [weak self] in self?.core.withLockIfAvailable { $0.changeCount } },
            takeStoredValue: { [weak self] state, count, refused in
                self?.submit(.takeStoredState(state, ifUnchangedSince: count, refused: refused))
            }
        ))
        if let error = loaded.error { persistence.lastError.modify(error) }
    }

    /// Creates a persisted store whose reducer only changes the state.
    public convenience init(
        initialState: State,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .poll,
        reducer: @escaping @Sendable (inout State, Action) -> Void,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState, key: key, storage: storage, writes: writes, externalChanges: externalChanges,
            reducer: { state, action in
                reducer(&state, action)
                return .none
            },
            middleware: middleware
        )
    }
}

extension Store {
    /// Writes the unsaved state to the storage now. Does nothing for a store without storage.
    ///
    /// - Throws: ``StorageError`` if the write failed; the state stays unsaved and is tried again later.
    public func flush() throws(StorageError) {
        try persistence?.flush()
    }

    /// For a persisted store, the last storage failure (`nil` once a write succeeds); `nil` without storage.
    public var storageError: StateContainer<StorageError?>? {
        persistence?.lastError
    }
}
