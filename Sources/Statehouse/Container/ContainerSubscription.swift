/// A listener's registration with a ``StateContainer``: where it sits in the container's table.
// @unchecked Sendable is safe: SubscriptionToken's state is atomics, and this subclass adds only `let` properties
// (the slot, and the link, itself Sendable), which never change after `init`.
@usableFromInline class ContainerSubscription<Value: Sendable>: SubscriptionToken, @unchecked Sendable {
    /// 32 bits, so that the object fits a 48-byte allocation with the fields it inherits.
    @usableFromInline let slot: Int32
    /// Reaches the container's listeners without keeping the container alive (see ``ContainerLink``).
    @usableFromInline let link: ContainerLink<Value>

    /// Borrows `container`: an initializer's parameters are owned by default, so the caller retained the container
    /// to pass it and the initializer released it (two atomic operations per subscription).
    @inlinable
    init(
        slot: Int, container: borrowing StateContainer<Value>, queued: Bool = false, heldByItsListener: Bool = false
    ) {
        precondition(slot < Int32.max, "more than 2³¹ listeners on one container")
        self.slot = Int32(truncatingIfNeeded: slot)
        self.link = container.link
        super.init(queued: queued, heldByItsListener: heldByItsListener)
    }

    override func detach() {
        // Borrowed, not retained again: this subscription's own reference keeps the link alive for the call.
        Unmanaged.passUnretained(link).withoutRetaining { $0.removeListener($0, self) }
    }
}

/// The registration of a synchronous `observe`, which is the token the caller holds: letting it go cancels it.
///
/// The container's table does not own it (see `ObserverTable.Entry`), so its last reference is the caller's.
// @unchecked Sendable is safe: this subclass adds no stored property to ContainerSubscription, whose state is
// `let`s and SubscriptionToken's atomics.
@usableFromInline
final class ContainerToken<Value: Sendable>: ContainerSubscription<Value>, @unchecked Sendable {
    @inlinable
    init(slot: Int, container: borrowing StateContainer<Value>) {
        super.init(slot: slot, container: container)
    }

    deinit {
        // Here, not in the base class: the other registrations are cancelled by what owns them (a name, a stream, an
        // `OwningToken`), and a base class's `deinit` runs once a subclass's properties are destroyed, too late for
        // an overridden `detach()`.
        cancel()
    }
}
