/// A subscriber's registration with a store: where it sits among the store's selection groups.
///
/// Subscribing is queued behind the work the store is doing, so the place is known only once the store gets to it.
// @unchecked: restates Subscription's conformance; `group` and `slot` are only read and written with the store's
// state lock held (`location`, `setLocation(group:slot:)`).
@usableFromInline class StoreSubscriptionBase: Subscription, @unchecked Sendable {
    @usableFromInline var group: Int32 = -1
    @usableFromInline var slot: Int32 = -1

    @inlinable
    override init(queued: Bool) {
        super.init(queued: queued)
    }

    /// The group and slot, once registered. Read with the store's lock held.
    @inlinable
    var location: (group: Int, slot: Int)? {
        group < 0 ? nil : (Int(group), Int(slot))
    }

    /// Records where the subscription was registered. Called with the store's lock held.
    @inlinable
    func setLocation(group: Int, slot: Int) {
        precondition(group < Int32.max && slot < Int32.max, "more than 2³¹ subscribers on one store")
        self.group = Int32(truncatingIfNeeded: group)
        self.slot = Int32(truncatingIfNeeded: slot)
    }
}

/// A registration that knows its store, to leave it when cancelled.
// @unchecked: restates Subscription's conformance; adds only a `weak let`.
@usableFromInline
final class StoreSubscription<State: Sendable, Action: Sendable>: StoreSubscriptionBase, @unchecked Sendable {
    @usableFromInline weak let store: Store<State, Action>?

    @inlinable
    init(store: Store<State, Action>, queued: Bool) {
        self.store = store
        super.init(queued: queued)
    }

    override func detach() {
        guard let store else { return }
        store.removeSubscriber(store, self)
    }
}
