extension Store {
    /// Makes this store, if it is a scoped store that does not follow its parent, start following it (see
    /// ``ScopeUpstream``). Tree lock held.
    ///
    /// - Returns: Whether the store follows; `false` only for an `ifLet` scope whose part of the parent is `nil`.
    func startFollowing(_ tree: inout ScopeTree.Transaction) -> Bool {
        guard case .scope(let upstream) = role else { return true }
        if upstream.isFollowing { return true }
        let link = upstream.attach(
            &tree,
            { part in core.withLock { $0.startFollowing(from: part) } },
            { [weak self] part in self?.follow(part) }
        )
        guard let link else { return false }
        upstream.setLink(link)
        return true
    }

    /// Makes this store, if it is a scoped store that follows its parent with no subscriber and no following scope
    /// of its own, stop following; then its parent, if that leaves it idle too. Tree lock held.
    func stopFollowingIfIdle(_ tree: inout ScopeTree.Transaction) {
        guard case .scope(let upstream) = role, !upstream.isPinned, followers.isEmpty, upstream.isFollowing else {
            return
        }
        let idle = core.withLock { core -> Bool in
            guard core.subscriberCount == 0 else { return false }
            core.stopFollowing()
            return true
        }
        guard idle else { return }
        _ = upstream.takeLink()
        // Whoever tracks this store's state with Observation now hears of changes through the parent (a read of
        // `state` reports itself to both): let them read again.
        let registrar = observation.registrar
        tree.afterUnlocking { registrar.changing {} }
        upstream.parentMayStop(&tree)
    }

    /// A scoped store's last subscriber was removed; `upstream` is its link to its parent.
    @usableFromInline
    func lostItsLastSubscriber(_ upstream: ScopeUpstream<State, Action>) {
        upstream.tree.withLock { stopFollowingIfIdle(&$0) }
    }

    /// Adds a subscriber with `add`, under the state lock; a scoped store starts following its parent first.
    /// Runs on the processor.
    ///
    /// - Returns: What gives the subscriber its first value; `nil` if it was cancelled meanwhile.
    @inlinable
    func register(
        _ add: (inout StoreState<State>) -> StoreState<State>.FirstValue?
    ) -> StoreState<State>.FirstValue? {
        switch role {
        case .root: core.withLock { add(&$0) }
        case .scope(let upstream): register(add, in: upstream)
        }
    }

    /// ``register(_:)`` for a scoped store; `upstream` is its link to its parent.
    @usableFromInline
    func register(
        _ add: (inout StoreState<State>) -> StoreState<State>.FirstValue?,
        in upstream: ScopeUpstream<State, Action>
    ) -> StoreState<State>.FirstValue? {
        upstream.tree.withLock { tree in
            guard startFollowing(&tree) else { return nil }
            let first = core.withLock { add(&$0) }
            if first == nil { stopFollowingIfIdle(&tree) }
            return first
        }
    }
}
