/// An object that subscribes to stores without keeping tokens: its subscriptions live exactly as long as it does.
///
/// ```swift
/// final class ScoreLabel: StoreSubscribing {
///     init(store: Store<Game, GameAction>) {
///         subscribe(store) { label, game in label.text = "\(game.score)" }
///     }
/// }
/// ```
///
/// - Subscribing to a store again replaces the previous subscription to it: once `subscribe` returns, only the new
///   closure is called.
/// - Nothing is delivered after the object is deallocated: the closure is given the object, held weakly, and is
///   not called once it is gone. Capture the object only through that argument, or the store will keep it alive.
/// - The subscriptions themselves are released with the object's other associated values (see
///   ``AssociatedObjectsTable``).
///
/// Deliveries come from the thread that dispatches unless you pass `on: .mainActor` (or a queue).
public protocol StoreSubscribing: AssociatedObjects, Sendable {}

/// The tokens of one object's store subscriptions, by store.
final class StoreSubscriptions: Sendable {
    private let tokens = Locked<[ObjectIdentifier: SubscriptionToken]>([:])

    /// Keeps `token` for `store`; returns the token it replaces, for the caller to cancel.
    func replace(_ token: SubscriptionToken?, for store: AnyObject) -> SubscriptionToken? {
        let id = ObjectIdentifier(store)
        return tokens.withLock { tokens in
            token.map { tokens.updateValue($0, forKey: id) } ?? tokens.removeValue(forKey: id)
        }
    }
}

private let subscriptionsKey = AssociatedKey<StoreSubscriptions>()

extension StoreSubscribing {
    /// Calls `render` with the object and the store's state now and after every dispatch, while the object lives.
    public func subscribe<State, Action>(
        _ store: Store<State, Action>,
        on delivery: Delivery = .synchronous,
        _ render: @escaping @Sendable (Self, State) -> Void
    ) {
        keep(store.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, on: delivery) { [weak self] state in
            guard let self else { return }
            render(self, state)
        }, for: store)
    }

    /// Calls `render` with the store's state now and after every dispatch, while the object lives.
    ///
    /// `render` must not capture the object strongly; use the variant whose closure is given the object instead.
    public func subscribe<State, Action>(
        _ store: Store<State, Action>,
        on delivery: Delivery = .synchronous,
        _ render: @escaping @Sendable (State) -> Void
    ) {
        subscribe(store, on: delivery) { _, state in render(state) }
    }

    /// Ends the subscription to `store`, if any.
    public func unsubscribe(from store: AnyObject) {
        subscriptions.replace(nil, for: store)?.cancel()
    }

    /// Keeps `token` as this object's subscription to `store`, cancelling the one it replaces.
    func keep(_ token: SubscriptionToken, for store: AnyObject) {
        subscriptions.replace(token, for: store)?.cancel()
    }

    private var subscriptions: StoreSubscriptions {
        associatedValue(for: subscriptionsKey) { StoreSubscriptions() }
    }
}
