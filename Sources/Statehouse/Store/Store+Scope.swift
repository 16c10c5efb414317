extension Store {
    /// A store for one part of this store's state: it reads that part, and sends its actions through this store.
    ///
    /// ```swift
    /// let settings: Store<Settings, SettingsAction> = appStore.scope(state: \.settings, action: AppAction.settings)
    /// ```
    ///
    /// The scoped store is a view of this one. While it has subscribers (or scopes of its own that do), its state is
    /// updated with this store's, together with every other scope of it, before any subscriber of any of them is
    /// told, so a subscriber of this store or of a scope that reads another scope sees the part of the state it was
    /// called for. Without subscribers it costs nothing when this store changes: its ``state`` reads this store's.
    /// Its subscribers are served in order with this store's work, and its actions go through this store's
    /// middleware and reducer. It keeps this store alive.
    ///
    /// Repeated calls from the same place in the source (`fileID`, `line` and `column`) with the same key path and
    /// the same child types return the same store while it lives — for example a SwiftUI `body` evaluated again.
    /// Closures cannot be compared, so the place of the call stands for the action function: the store made first
    /// keeps the `action` it was given. Calls from different places, or with another key path, make another store.
    ///
    /// - Parameters:
    ///   - toChildState: The part of the state. A key-path literal is `Sendable`.
    ///   - toAction: Makes an action of this store from one of the scoped store; an enum case such as
    ///     `AppAction.settings` is one.
    ///   - fileID: The file of the call, to recognize a repeated call. Leave the default.
    ///   - line: The line of the call. Leave the default.
    ///   - column: The column of the call. Leave the default.
    /// - Returns: The scoped store.
    @inlinable
    public func scope<ChildState: Sendable, ChildAction: Sendable>(
        state toChildState: any KeyPath<State, ChildState> & Sendable,
        action toAction: @escaping @Sendable (ChildAction) -> Action,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        column: UInt = #column
    ) -> Store<ChildState, ChildAction> {
        // The scoped store's `state` calls `read` on every read (it reads through this store, following or not), and
        // a following one `extract`s its part at each change of this store: made here, they are specialized for the
        // caller's types (made in the generic code below, a read cost ×8 a read of this store's state). A part that
        // can be loaded by offset is read under this store's lock, without copying the rest of the state; any other
        // key path may run a getter, which may read stores itself, so it is applied to a copy, outside the lock.
        // Made only for a new scoped store.
        scope(
            state: toChildState,
            access: {
                guard let load = StateSelector.load(toChildState) else {
                    return (read: { [self] in state[keyPath: toChildState] }, extract: { $0[keyPath: toChildState] })
                }
                return (read: { [self] in reading(load) }, extract: load)
            },
            action: toAction, fileID: fileID, line: line, column: column
        )
    }

    /// ``scope(state:action:fileID:line:column:)`` with `access`, which makes how the scoped store reads its part
    /// through this store (`read`) and picks it from a state of this store (`extract`).
    @usableFromInline
    func scope<ChildState: Sendable, ChildAction: Sendable>(
        state toChildState: any KeyPath<State, ChildState> & Sendable,
        access: () -> (read: @Sendable () -> ChildState, extract: @Sendable (State) -> ChildState),
        action toAction: @escaping @Sendable (ChildAction) -> Action,
        fileID: StaticString,
        line: UInt,
        column: UInt
    ) -> Store<ChildState, ChildAction> {
        let key = ScopeCache.Key(
            keyPath: toChildState, store: ObjectIdentifier(Store<ChildState, ChildAction>.self), kind: .scope,
            site: CallSite(fileID: fileID, line: line, column: column)
        )
        if let made = followers.madeScope(for: key) {
            return unsafeDowncast(made, to: Store<ChildState, ChildAction>.self)
        }
        let (read, extract) = access()
        let child: Store<ChildState, ChildAction> = makeScope(
            pinned: false,
            read: read,
            extract: { extract($0) },
            action: toAction
        )
        return unsafeDowncast(followers.recordScope(child, for: key), to: Store<ChildState, ChildAction>.self)
    }

    /// A store for an optional part of this store's state, while that part is not `nil`: `ifLet`-style scoping.
    ///
    /// ```swift
    /// if let detail = appStore.scope(ifLet: \.detail, action: AppAction.detail) {
    ///     showDetail(detail)
    /// }
    /// ```
    ///
    /// Returns `nil` when this store's part is `nil` now. Otherwise the scoped store shows the part, unwrapped, and
    /// keeps showing the last non-`nil` value after this store's becomes `nil` (a view that is being dismissed still
    /// has something to show); when it is set again, the scoped store shows the new value. Its actions still go
    /// through this store, whatever the part is: the reducer decides what an action for a missing child does.
    ///
    /// To remember the last value, the scoped store follows this store from the moment it is made, subscribers or
    /// not: each change of this store reads the key path once while the scoped store lives. Everything else is as
    /// for ``scope(state:action:fileID:line:column:)``, including that repeated calls from the same place with the
    /// same key path return the same store while it lives (as long as the part is not `nil`).
    ///
    /// - Parameters:
    ///   - toChildState: The optional part of the state. A key-path literal is `Sendable`.
    ///   - toAction: Makes an action of this store from one of the scoped store.
    ///   - fileID: The file of the call, to recognize a repeated call. Leave the default.
    ///   - line: The line of the call. Leave the default.
    ///   - column: The column of the call. Leave the default.
    /// - Returns: The scoped store, or `nil` if the part is `nil` now.
    public func scope<ChildState: Sendable, ChildAction: Sendable>(
        ifLet toChildState: any KeyPath<State, ChildState?> & Sendable,
        action toAction: @escaping @Sendable (ChildAction) -> Action,
        fileID: StaticString = #fileID,
        line: UInt = #line,
        column: UInt = #column
    ) -> Store<ChildState, ChildAction>? {
        let key = ScopeCache.Key(
            keyPath: toChildState, store: ObjectIdentifier(Store<ChildState, ChildAction>.self), kind: .ifLet,
            site: CallSite(fileID: fileID, line: line, column: column)
        )
        if let made = followers.madeScope(for: key) {
            return state[keyPath: toChildState] == nil ? nil : unsafeDowncast(made, to: Store<ChildState, ChildAction>.self)
        }
        let child: Store<ChildState, ChildAction> = makeScope(
            pinned: true,
            read: { preconditionFailure("an ifLet scope follows its parent for as long as it lives") },
            extract: { $0[keyPath: toChildState] },
            action: toAction
        )
        // Made outside the tree lock: a child that does not start ends here, and its `deinit` takes that lock.
        let started = followers.tree.withLock { tree in
            if child.startFollowing(&tree) { return true }
            stopFollowingIfIdle(&tree)  // this store may have started following only for the child
            return false
        }
        guard started else { return nil }
        return unsafeDowncast(followers.recordScope(child, for: key), to: Store<ChildState, ChildAction>.self)
    }

    /// A scoped store of this store that does not follow it yet (unless `pinned`, when the caller starts it).
    ///
    /// - Parameters:
    ///   - pinned: Whether the scoped store follows for as long as it lives.
    ///   - read: Reads the scoped store's part of this store's current state, through this store.
    ///   - extract: Picks the scoped store's part from a state of this store; `nil` keeps the part it has.
    ///   - toAction: Makes an action of this store from one of the scoped store.
    func makeScope<ChildState: Sendable, ChildAction: Sendable>(
        pinned: Bool,
        read: @escaping @Sendable () -> ChildState,
        extract: @escaping @Sendable (State) -> ChildState?,
        action toAction: @escaping @Sendable (ChildAction) -> Action
    ) -> Store<ChildState, ChildAction> {
        let upstream = ScopeUpstream<ChildState, ChildAction>(
            tree: followers.tree,
            pinned: pinned,
            read: read,
            attach: { [self] tree, start, follow in
                guard startFollowing(&tree) else { return nil }
                // Under this store's state lock, where `commitWithoutTelling` asks whether anyone follows: a change
                // of this store is either in the state read here or followed by the child.
                return core.withLock { core -> ScopeLink? in
                    guard let state = core.followedState, let part = extract(state) else { return nil }
                    start(part)
                    return followers.add { state in extract(state).flatMap(follow) }
                }
            },
            parentMayStop: { [self] tree in stopFollowingIfIdle(&tree) },
            actions: ParentActions(
                dispatch: { [self] action in dispatch(toAction(action)) },
                send: { [self] action in await send(toAction(action)) }
            ),
            enterParent: { [self] now, later, waits in enter(now, orQueue: .run(later()), waits: waits) },
            effectsHost: self
        )
        return Store<ChildState, ChildAction>(scope: upstream)
    }
}
