extension Store {
    /// A store for one part of this store's state: it reads that part, and sends its actions through this store.
    ///
    /// ```swift
    /// let settings: Store<Settings, SettingsAction> = appStore.scope(state: \.settings, action: AppAction.settings)
    /// ```
    ///
    /// The scoped store has subscriptions of its own and follows this store: after every change of this store's
    /// state, before ``dispatch(_:)`` on either returns (when the stores are idle), the scoped store's state is the
    /// new part. Its actions go through this store's middleware and reducer. It keeps this store alive.
    public func scope<ChildState: Sendable, ChildAction: Sendable>(
        state toChildState: any KeyPath<State, ChildState> & Sendable,
        action toAction: @escaping @Sendable (ChildAction) -> Action
    ) -> Store<ChildState, ChildAction> {
        let child = Store<ChildState, ChildAction>(
            state: state[keyPath: toChildState],
            reducer: nil,
            pipeline: nil,
            forward: { action in self.dispatch(toAction(action)) }
        )
        let upstream = subscribe(select: { $0[keyPath: toChildState] }, isDuplicate: { _, _ in false }) {
            [weak child] childState in
            child?.replaceState(childState)
        }
        child.upstream.withLock { $0 = upstream }
        return child
    }
}
