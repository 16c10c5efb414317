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
/// - The store lets go of the closure (and what it captured) at its first change after the object is gone, whether
///   or not that change touches what the object selects; the subscription then no longer keeps the store alive.
///   The tokens themselves are released with the object's other associated values (see ``AssociatedObjectsTable``).
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
        keep(subscriptionTo: store, select: { $0 }, isDuplicate: { _, _ in false }, on: delivery, render)
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

    /// Subscribes to what `select` picks from `store`'s state, delivering it with the object while the object
    /// lives; keeps the token as this object's subscription to `store`, cancelling the one it replaces.
    ///
    /// The first change of the store that finds the object gone cancels the subscription, so the store lets go of
    /// `deliver` and what it captured then, and the subscription of the store, not only when a sweep of
    /// ``AssociatedObjectsTable`` releases the object's tokens. The selection says whether the object is gone, so
    /// that a change that leaves the selection as it was (a view state that did not change) still reaches the
    /// listener, which does the cancelling.
    func keep<State, Action, Value: Sendable>(
        subscriptionTo store: Store<State, Action>,
        select: @escaping @Sendable (State) -> Value,
        isDuplicate: @escaping @Sendable (Value, Value) -> Bool,
        on delivery: Delivery,
        _ deliver: @escaping @Sendable (Self, Value) -> Void
    ) {
        // Filled in before this method returns, while `self` is certainly alive: no delivery can find it gone sooner.
        let subscription = Locked<SubscriptionToken?>(nil)
        let (registration, _) = store.register(
            .function { [weak self] (state: State) -> OwnedSelection<Value> in
                self == nil ? .ownerGone : .selected(select(state))
            },
            initial: true,
            on: delivery,
            isDuplicate: { (last: OwnedSelection<Value>, new: OwnedSelection<Value>) in
                last.isDuplicate(of: new, by: isDuplicate)
            }
        ) { [weak self] selection in
            guard let self, case .selected(let value) = selection else {
                // Cancelling from inside its own call does not wait for the call to end.
                return subscription.withLock { $0 }?.cancel() ?? ()
            }
            deliver(self, value)
        }
        // The registration, not the token: the store keeps the listener, which would keep the token alive. So the
        // registration is not its own token either (see `OwningToken`).
        subscription.withLock { $0 = registration }
        subscriptions.replace(OwningToken(registration), for: store)?.cancel()
    }

    private var subscriptions: StoreSubscriptions {
        associatedValue(for: subscriptionsKey) { StoreSubscriptions() }
    }
}

/// What a ``StoreSubscribing`` object's subscription selects: the object's selection, or that the object is gone.
enum OwnedSelection<Value: Sendable>: Sendable {
    case selected(Value)
    case ownerGone

    /// Whether `self` and `other` are the same selection by `isDuplicate`; never when the owner is gone.
    func isDuplicate(of other: Self, by isDuplicate: (Value, Value) -> Bool) -> Bool {
        guard case .selected(let value) = self, case .selected(let otherValue) = other else { return false }
        return isDuplicate(value, otherValue)
    }
}
