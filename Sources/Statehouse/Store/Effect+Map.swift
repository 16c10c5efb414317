extension Effect {
    /// The same effect, sending `transform(action)` wherever it would send `action`.
    ///
    /// This is how a parent feature runs a child feature's effects: the child's reducer returns
    /// `Effect<ChildAction>`, the parent wraps each action it sends in its own case. Everything else is kept: what
    /// runs, when, its cancellation ids (the ids are not transformed), and its cancellation — an action the mapped
    /// effect sends after it was cancelled is dropped, as the original's would be.
    ///
    /// ```swift
    /// case .settings(let action):
    ///     return settingsReducer(&state.settings, action).map(AppAction.settings)
    /// ```
    ///
    /// - Parameter transform: Turns an action of this effect into one of the store that runs it; called on
    ///   whatever thread the effect sends from.
    /// - Returns: An effect of `NewAction`s.
    public func map<NewAction: Sendable>(_ transform: @escaping @Sendable (Action) -> NewAction) -> Effect<NewAction> {
        Effect<NewAction>(operations: operations.map { $0.map(transform) })
    }
}

extension Effect.Operation {
    /// The same operation, its actions transformed.
    func map<NewAction: Sendable>(
        _ transform: @escaping @Sendable (Action) -> NewAction
    ) -> Effect<NewAction>.Operation {
        switch self {
        case .send(let action):
            .send(transform(action))
        case .run(let run):
            .run(run.map(transform))
        case .cancellable(let effect, let id, let cancelInFlight):
            .cancellable(effect.map(transform), id: id, cancelInFlight: cancelInFlight)
        case .cancel(let id):
            .cancel(id: id)
        case .concatenate(let effects):
            .concatenate(effects.map { $0.map(transform) })
        case .throttle(let effect, let id, let window, let latest):
            .throttle(effect.map(transform), id: id, window: window, latest: latest)
        }
    }
}

extension Send {
    /// A `Send` for the actions of an effect that was mapped into this one's: it transforms each action and
    /// delivers it here, under the same lease, so that the mapped effect's cancellation still drops it.
    func sending<Original: Sendable>(through transform: @escaping @Sendable (Original) -> Action) -> Send<Original> {
        let deliver = self.deliver
        return Send<Original>({ action, origin in deliver(transform(action), origin) }, lease: lease)
    }
}
