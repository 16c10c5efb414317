import Synchronization

/// A subscriber's registration with a store: where it sits among the store's selection groups.
///
/// Subscribing is queued behind the work the store is doing, so the place is known only once the store gets to it.
// @unchecked Sendable is safe: `group` and `slot`, the only state added to SubscriptionToken's atomics, are read and
// written only with the store's state lock held (`location`, `setLocation(group:slot:)`), which orders every access.
@usableFromInline class StoreSubscriptionBase: SubscriptionToken, @unchecked Sendable {
    // Unchecked: the store's lock already makes every access exclusive, and the runtime's checks of a class's `var`s
    // cost about 350 instructions per subscribe + cancel (six accesses, each recorded and looked up).
    @exclusivity(unchecked) @usableFromInline var group: Int32 = -1
    @exclusivity(unchecked) @usableFromInline var slot: Int32 = -1

    @inlinable
    override init(queued: Bool, heldByItsListener: Bool) {
        super.init(queued: queued, heldByItsListener: heldByItsListener)
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

/// A registration that knows its store, to leave it when cancelled; it keeps the store alive until then.
///
/// A subscription holds its store strongly, so that a token is enough to keep a store it subscribed to working
/// (`let token = app.scope(…).subscribe(…)` needs no other reference to the scoped store). The store holds its
/// subscriptions too, in its selection groups: the cycle ends when the token is cancelled or released, which removes
/// the subscription from the store and drops the subscription's reference to it.
///
/// No `weak` reference to the store: the first one gives the store a side table for good, and from then on every
/// retain and release of it takes the runtime's slow path (about 700 instructions of a subscribe + cancel).
// @unchecked Sendable is safe: the only state this subclass adds is `retainedStore`, an atomic that the first
// `cancel()` empties with an exchange, so two threads never both release the store.
@usableFromInline
final class StoreSubscription<State: Sendable, Action: Sendable>: StoreSubscriptionBase, @unchecked Sendable {
    /// The store, retained until the subscription is cancelled. An atomic of a type that is not generic: the
    /// subscription's methods run unspecialized, where a generic atomic looked its types up on every call (×1.6 on
    /// subscribe + cancel); and ThreadSanitizer sees atomics on Linux.
    @usableFromInline let retainedStore: Atomic<Unmanaged<AnyObject>?>

    @inlinable
    init(store: Store<State, Action>, queued: Bool) {
        self.retainedStore = Atomic(Unmanaged.passRetained(store as AnyObject))
        super.init(queued: queued, heldByItsListener: queued)
    }

    deinit {
        // A synchronous subscription is its own token: letting it go cancels it. A queued one was cancelled by its
        // `OwningToken` already.
        cancel()
    }

    override func detach() {
        guard let retained = retainedStore.exchange(nil, ordering: .acquiringAndReleasing) else { return }
        // Released after the removal, outside every lock: releasing the last reference ends the store, whose
        // `deinit` takes locks of its own.
        defer { retained.release() }
        // Borrowed from the reference this subscription holds, not retained again for the call.
        retained.withoutRetaining { object in
            let store = unsafeDowncast(object, to: Store<State, Action>.self)
            store.removeSubscriber(store, self)
        }
    }
}
