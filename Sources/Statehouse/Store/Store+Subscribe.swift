import Dispatch

extension Store {
    /// Calls `listener` with the value at `keyPath` now, and again each time a dispatch changes it.
    ///
    /// ```swift
    /// let token = store.subscribe(\.count) { count in label.text = "\(count)" }
    /// ```
    ///
    /// Subscribers of the same key path share one comparison per dispatch, however many they are. A key path to a
    /// stored property is read by its offset; a computed property's getter runs, as `select` does in
    /// ``subscribe(select:isDuplicate:initial:on:_:)``, with the store's state locked: it must not read this store
    /// or its scoped stores.
    ///
    /// - Parameters:
    ///   - keyPath: What to select. A key-path literal is `Sendable`.
    ///   - initial: Call `listener` with the current value first (the default). The first call happens before
    ///     `subscribe` returns, unless the store is busy; then it happens before any later change is shown.
    ///   - delivery: Where `listener` runs; see ``Delivery``.
    ///   - listener: Receives the selected value.
    /// - Returns: The token that keeps `listener` subscribed, and keeps the store alive: a subscription to a store
    ///   that nothing else holds (`app.scope(…).subscribe(…)`) works for as long as the token lives. Cancelling or
    ///   releasing the token lets the store go. See <doc:TheStore>.
    /// - Complexity: O(1) to subscribe and to cancel.
    @inlinable
    public func subscribe<Value: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, Value> & Sendable,
        initial: Bool = true,
        on delivery: Delivery = .synchronous,
        _ listener: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        token(for: register(.keyPath(keyPath), initial: initial, on: delivery, isDuplicate: ==, listener))
    }

    /// Calls `listener` with what `select` picks from the state now, and again each time it changes.
    ///
    /// ```swift
    /// store.subscribe(select: { ($0.count, $0.name) }, isDuplicate: ==) { count, name in … }
    /// ```
    ///
    /// `select` runs once per change of the state, and `listener` receives the selection it made then. It runs with
    /// the store's state locked: it must not read this store or its scoped stores.
    ///
    /// - Parameters:
    ///   - select: Picks what `listener` needs from the state.
    ///   - isDuplicate: Whether two selections are the same; `{ _, _ in false }` calls `listener` after every
    ///     dispatch.
    ///   - initial: Call `listener` with the current selection first (the default).
    ///   - delivery: Where `listener` runs; see ``Delivery``.
    ///   - listener: Receives the selection.
    /// - Returns: The token that keeps `listener` subscribed and the store alive (see
    ///   ``subscribe(_:initial:on:_:)``).
    @inlinable
    public func subscribe<Value: Sendable>(
        select: @escaping @Sendable (State) -> Value,
        isDuplicate: @escaping @Sendable (Value, Value) -> Bool,
        initial: Bool = true,
        on delivery: Delivery = .synchronous,
        _ listener: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        token(for: register(.function(select), initial: initial, on: delivery, isDuplicate: isDuplicate, listener))
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

    /// The token of a subscription that ``register(_:initial:on:isDuplicate:_:)`` made.
    ///
    /// A subscription is its own token only if the caller's reference is its only one: not while the store's queued
    /// work holds it to register it (letting the token go would not stop the calls once registered), nor when a
    /// queued listener's closure holds it. Otherwise a token of its own cancels it (see `OwningToken`).
    @inlinable
    func token(
        for registration: (subscription: StoreSubscription<State, Action>, isRegistered: Bool)
    ) -> SubscriptionToken {
        let (subscription, isRegistered) = registration
        return isRegistered && !subscription.isQueued ? subscription : OwningToken(subscription)
    }

    /// Registers `listener` for what `selector` selects: at once if the store is idle, else after the work queued
    /// before it. Returns the subscription, not a token, and whether it is registered already.
    @inlinable
    func register<Value: Sendable>(
        _ selector: StateSelector<State, Value>,
        initial: Bool,
        on delivery: Delivery,
        isDuplicate: @escaping @Sendable (Value, Value) -> Bool,
        _ listener: @escaping @Sendable (Value) -> Void
    ) -> (subscription: StoreSubscription<State, Action>, isRegistered: Bool) {
        let queue = delivery.serialQueue(label: "Store")
        let subscription = StoreSubscription(store: self, queued: queue != nil)
        // Registering is queued like an action, so that the first value comes before any later change; an idle
        // store does it at once, without making it a closure (`enter`). Queued, it holds the store strongly, as
        // the subscription does (a weak capture would cost the store its fast reference counting; see
        // `StoreSubscription`): queued work is done, and let go, by the store's processor.
        @Sendable func register() {
            let key = selector.sharingKey
            let first = self.register { core in
                core.add(subscription, sharing: key) { state in
                    .selecting(selector.read, from: state, key: key, isDuplicate: isDuplicate)
                } makeBody: { selection in
                    // The listener delivers the selection its group made when it compared (see `LastSelection`):
                    // each change is selected once per group.
                    let last = unsafeDowncast(selection, to: LastSelection<Value>.self)
                    guard let queue else { return { _ in listener(last.value) } }
                    return { _ in
                        let value = last.value
                        queue.async { subscription.invoke(on: currentThreadIdentity()) { listener(value) } }
                    }
                }
            }
            // Not `if let first`, nor `switch`: they copied it (a retain and a release of the listener) or took
            // generic paths to destroy it, 240 instructions more, measured.
            if initial { first?.deliver(through: subscription, on: currentThreadIdentity()) }
        }
        // Not waited for if queued, unless the store has a backlog: the token is the caller's at once, and a dispatch
        // after `subscribe` is queued behind the registration, so that the subscriber hears it.
        let entered = enter(register, orQueue: .run(register), waits: .unlessBacklogged)
        if case .didNow = entered { return (subscription, true) }
        return (subscription, false)
    }
}
