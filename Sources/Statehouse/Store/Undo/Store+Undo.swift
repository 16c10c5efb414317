extension Store {
    /// Creates a store that can undo and redo the actions `undo` says are undoable.
    ///
    /// ```swift
    /// let store = Store(initialState: Doc(), reducer: docReducer, undo: UndoPolicy(limit: 100) { $0.isUndoable })
    /// store.dispatch(.delete("Writing"))
    /// store.undo()
    /// ```
    ///
    /// See <doc:UndoAndRedo>. Disfavored, as the initializer without undo is, so that a reducer closure that returns
    /// nothing picks the `Void` variant.
    @_disfavoredOverload
    public convenience init(
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        middleware: [Middleware<State, Action>] = [],
        undo policy: UndoPolicy<Action>
    ) {
        let log = UndoLog<State, Action>(policy: policy)
        self.init(
            state: initialState,
            role: .root(RootParts(reducer: reducer, persistence: nil, undo: log)),
            pipeline: Middleware.chain(middleware) { store, action in
                store.apply(action) { state, action in log.reduce(&state, action, with: reducer) }
            }
        )
    }

    /// Creates a store that can undo and redo, whose reducer only changes the state.
    public convenience init(
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Void,
        middleware: [Middleware<State, Action>] = [],
        undo policy: UndoPolicy<Action>
    ) {
        self.init(
            initialState: initialState, reducer: Self.withoutEffects(reducer), middleware: middleware, undo: policy
        )
    }

    /// Creates a store that can undo and redo, with a composed ``Reducer``.
    public convenience init(
        initialState: State,
        reducer: Reducer<State, Action>,
        middleware: [Middleware<State, Action>] = [],
        undo policy: UndoPolicy<Action>
    ) {
        self.init(initialState: initialState, reducer: reducer.reduce, middleware: middleware, undo: policy)
    }

    /// Takes back the newest group of undoable actions that is done, keeping every other action applied.
    ///
    /// It takes its turn like an action: what was dispatched before it is applied first, and, called from outside
    /// the store's work, it returns once the state is changed and the subscribers told. Nothing happens when there
    /// is nothing to undo (``canUndo``), or on a store without an ``UndoPolicy`` or a scoped store. On a store of
    /// ``Undoable`` state, it dispatches ``UndoableAction/undo``.
    public func undo() {
        if let command = UndoCommand.undo.action(of: Action.self), undoLog == nil { return dispatch(command) }
        changeHistory(.undo) { $0.undo() }
    }

    /// Applies again the newest group ``undo()`` took back, where it was among the other actions. A new undoable
    /// action forgets what could be redone. Nothing happens when there is nothing to redo (``canRedo``). On a store
    /// of ``Undoable`` state, it dispatches ``UndoableAction/redo``.
    public func redo() {
        if let command = UndoCommand.redo.action(of: Action.self), undoLog == nil { return dispatch(command) }
        changeHistory(.redo) { $0.redo() }
    }

    /// Makes one undo group of the undoable actions applied while `body` runs: a gesture that dispatches several
    /// is undone at once. Groups inside a group join it. Actions that effects send later are not in it; undoable
    /// actions other threads apply while `body` runs are in it (the store applies actions one at a time, in one
    /// order, and the group is a stretch of that order): group a gesture where the store's user actions come from
    /// one place, such as the main thread. A group with more actions than the policy's `historyLimit` cannot be
    /// undone: it is forgotten whole, never undone in part.
    ///
    /// On a scoped store, and on a store of ``Undoable`` state (whose history other processes and replicas share),
    /// `body` runs ungrouped: group on the root store, or dispatch ``UndoableAction/group(_:_:)``.
    ///
    /// - Parameters:
    ///   - name: What a menu calls the group ("Undo Move"); without it, the name of its first named action.
    ///   - body: Dispatches the group's actions.
    public func undoGroup<Result>(_ name: String? = nil, _ body: () throws -> Result) rethrows -> Result {
        guard let log = undoLog else { return try body() }
        run { log.openGroup(named: name) }
        defer { run { log.closeGroup() } }
        return try body()
    }

    /// Whether ``undo()`` would take something back. Observable, like ``state``.
    public var canUndo: Bool { undoAvailability.canUndo }

    /// Whether ``redo()`` would apply something again. Observable, like ``state``.
    public var canRedo: Bool { undoAvailability.canRedo }

    /// The name of what ``undo()`` would take back, for a menu ("Undo Delete Writing"), if the policy names it.
    public var undoName: String? { undoAvailability.undoName }

    /// The name of what ``redo()`` would apply again, if the policy names it.
    public var redoName: String? { undoAvailability.redoName }

    /// Whether undo and redo can be done, and what they would do. Observable, like ``state``.
    public var undoAvailability: UndoAvailability {
        guard let log = undoLog else { return Self.availability(in: state) }
        observation.accessed()
        return log.availability
    }

    /// ``undoAvailability`` now, then each time it changes, as an async sequence: what a menu follows. It follows
    /// the rules of ``values(_:bufferingPolicy:)``.
    public func undoAvailabilityValues(
        bufferingPolicy: AsyncStream<UndoAvailability>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<UndoAvailability> {
        let log = undoLog
        // Read as the group selects, under the state lock, after the history changed with the state.
        return values(
            select: { state in log?.availability ?? Self.availability(in: state) }, isDuplicate: ==,
            bufferingPolicy: bufferingPolicy
        )
    }

    /// What the history in an ``Undoable`` state says; nothing to undo in any other.
    private static func availability(in state: State) -> UndoAvailability {
        (state as? any UndoAvailabilityProviding)?.undoAvailability ?? UndoAvailability()
    }

    /// How much the undo history holds. For tests and diagnostics.
    var undoFootprint: (groups: Int, actions: Int) {
        undoLog?.footprint ?? (0, 0)
    }

    private var undoLog: UndoLog<State, Action>? {
        guard case .root(let root) = role else { return nil }
        return root.undo
    }

    private func changeHistory(
        _ replacement: StateReplacement,
        _ step: @escaping @Sendable (inout UndoHistory<State, Action>) -> UndoHistory<State, Action>.Replay?
    ) {
        guard case .root(let root) = role, let log = root.undo else { return }
        let reducer = root.reducer
        run { [self] in
            commit { core in
                guard let state = log.state(after: step, reducer: reducer) else { return ((), nil) }
                // Not an action: a recording would no longer lead to the store's state. It starts again from the
                // state undo leaves (on a store of `Undoable` state, undo and redo are actions, and recorded).
                if recorder.isRecording { recorder.start(from: state) }
                recorder.replaced(replacement, with: state)
                return ((), core.replace(with: state))
            }
        }
    }

    /// The state is replaced whole: what undo would apply again no longer leads to it.
    @usableFromInline
    func forgetUndoHistory() {
        guard case .root(let root) = role else { return }
        root.undo?.forgetAll()
    }
}
