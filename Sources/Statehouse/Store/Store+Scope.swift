extension Store {
    /// A store for one part of this store's state: it reads that part, and sends its actions through this store.
    ///
    /// ```swift
    /// let settings: Store<Settings, SettingsAction> = appStore.scope(state: \.settings, action: AppAction.settings)
    /// ```
    ///
    /// The scoped store is a view of this one: its state is updated with this store's, together with every other
    /// scope of it, before any subscriber of any of them is told, so a subscriber of this store or of a scope that
    /// reads another scope sees the part of the state it was called for. Its subscribers are served in order with this store's work, and its actions go through this
    /// store's middleware and reducer. It keeps this store alive.
    public func scope<ChildState: Sendable, ChildAction: Sendable>(
        state toChildState: any KeyPath<State, ChildState> & Sendable,
        action toAction: @escaping @Sendable (ChildAction) -> Action
    ) -> Store<ChildState, ChildAction> {
        let child = Store<ChildState, ChildAction>(
            state: state[keyPath: toChildState],
            reducer: nil,
            pipeline: nil,
            forward: { action in self.dispatch(toAction(action)) },
            serializer: { work in self.submit(.run(work)) }
        )
        // Following starts, and the child's state is read again, under this store's state lock: a change of this
        // store is then either in that state or followed (a change applied before and followed after is followed
        // twice, harmlessly). The child has no subscriber yet, so setting its state tells nobody.
        core.withLock { core in
            let link = followers.add { [weak child] state in child?.follow(state[keyPath: toChildState]) }
            child.upstream.withLock { $0 = link }
            _ = child.core.withLock { $0.replace(with: core.state[keyPath: toChildState]) }
        }
        return child
    }
}
