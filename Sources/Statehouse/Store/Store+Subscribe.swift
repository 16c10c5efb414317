import Dispatch

extension Store {
    /// Calls `listener` with the value at `keyPath` now, and again each time a dispatch changes it.
    ///
    /// ```swift
    /// let token = store.subscribe(\.count) { count in label.text = "\(count)" }
    /// ```
    ///
    /// Subscribers of the same key path share one comparison per dispatch, however many they are.
    ///
    /// - Parameters:
    ///   - keyPath: What to select. A key-path literal is `Sendable`.
    ///   - initial: Call `listener` with the current value first (the default). The first call happens before
    ///     `subscribe` returns, unless the store is busy; then it happens before any later change is shown.
    ///   - delivery: Where `listener` runs; see ``Delivery``.
    ///   - listener: Receives the selected value.
    /// - Returns: The token that keeps `listener` subscribed.
    /// - Complexity: O(1) to subscribe and to cancel.
    @inlinable
    public func subscribe<Value: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, Value> & Sendable,
        initial: Bool = true,
        on delivery: Delivery = .synchronous,
        _ listener: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        subscribe(
            sharing: SelectionKey(keyPath), initial: initial, on: delivery,
            select: { $0[keyPath: keyPath] }, isDuplicate: ==, listener
        )
    }

    /// Calls `listener` with what `select` picks from the state now, and again each time it changes.
    ///
    /// ```swift
    /// store.subscribe(select: { ($0.count, $0.name) }, isDuplicate: ==) { count, name in … }
    /// ```
    ///
    /// - Parameters:
    ///   - select: Picks what `listener` needs from the state.
    ///   - isDuplicate: Whether two selections are the same; `{ _, _ in false }` calls `listener` after every
    ///     dispatch.
    ///   - initial: Call `listener` with the current selection first (the default).
    ///   - delivery: Where `listener` runs; see ``Delivery``.
    ///   - listener: Receives the selection.
    /// - Returns: The token that keeps `listener` subscribed.
    @inlinable
    public func subscribe<Value: Sendable>(
        select: @escaping @Sendable (State) -> Value,
        isDuplicate: @escaping @Sendable (Value, Value) -> Bool,
        initial: Bool = true,
        on delivery: Delivery = .synchronous,
        _ listener: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        subscribe(sharing: nil, initial: initial, on: delivery, select: select, isDuplicate: isDuplicate, listener)
    }

    /// Calls `listener` with the whole state now, and after every dispatch that changed it.
    @inlinable
    public func subscribe(
        initial: Bool = true,
        on delivery: Delivery = .synchronous,
        _ listener: @escaping @Sendable (State) -> Void
    ) -> SubscriptionToken where State: Equatable {
        subscribe(\.self, initial: initial, on: delivery, listener)
    }

    /// Calls `listener` with the whole state now, and after every dispatch (`State` is not `Equatable`, so every
    /// dispatch counts as a change).
    @inlinable
    public func subscribe(
        initial: Bool = true,
        on delivery: Delivery = .synchronous,
        _ listener: @escaping @Sendable (State) -> Void
    ) -> SubscriptionToken {
        subscribe(select: { $0 }, isDuplicate: { _, _ in false }, initial: initial, on: delivery, listener)
    }

    @inlinable
    func subscribe<Value: Sendable>(
        sharing key: SelectionKey?,
        initial: Bool,
        on delivery: Delivery,
        select: @escaping @Sendable (State) -> Value,
        isDuplicate: @escaping @Sendable (Value, Value) -> Bool,
        _ listener: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        let queue = delivery.serialQueue(label: "Store")
        let subscription = StoreSubscription(store: self, queued: queue != nil)
        let body: SelectionGroup<State>.Listener
        if let queue {
            body = { state in
                queue.async { subscription.invoke(on: currentThreadIdentity()) { listener(select(state)) } }
            }
        } else {
            body = { state in listener(select(state)) }
        }
        // Registering is queued like an action, so that the first value comes before any later change.
        let register: @Sendable () -> Void = { [weak self] in
            guard let self else { return }
            let round = core.withLock { core in
                core.add(subscription, body: body, sharing: key) { state in
                    .selecting(select, from: state, key: key, isDuplicate: isDuplicate)
                }
            }
            if initial, let round { round.deliver(on: currentThreadIdentity()) }
        }
        submit(.run(register))
        return SubscriptionToken(subscription)
    }
}
