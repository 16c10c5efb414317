/// A listener's registration with a ``StateContainer``: where it sits in the container's table.
// @unchecked restates Subscription's conformance: this subclass adds only `let` properties.
@usableFromInline class ContainerSubscription<Value: Sendable>: Subscription, @unchecked Sendable {
    /// 32 bits, so that the object fits a 48-byte allocation with the fields it inherits.
    @usableFromInline let slot: Int32
    /// Reaches the container without keeping it alive (see ``ContainerLink``).
    @usableFromInline let link: ContainerLink

    @inlinable
    init(slot: Int, container: StateContainer<Value>, queued: Bool = false) {
        precondition(slot < Int32.max, "more than 2³¹ listeners on one container")
        self.slot = Int32(truncatingIfNeeded: slot)
        self.link = container.link
        super.init(queued: queued)
    }

    override func detach() {
        let removed = link.withContainer { container in
            let container = unsafeDowncast(container, to: StateContainer<Value>.self)
            return container.removeListener(container, self)
        }
        // Let go outside every lock: the listener may hold the last reference to another token of this container,
        // whose cancellation takes the container's lock and the link's (see `ObserverTable.remove`).
        withExtendedLifetime(removed) {}
    }
}
