/// A listener's registration with a ``StateContainer``: where it sits in the container's table.
// @unchecked restates Subscription's conformance: this subclass adds only `let` and `weak let` properties.
@usableFromInline class ContainerSubscription<Value: Sendable>: Subscription, @unchecked Sendable {
    /// 32 bits, so that the object fits a 48-byte allocation with the fields it inherits.
    @usableFromInline let slot: Int32
    @usableFromInline weak let container: StateContainer<Value>?

    @inlinable
    init(slot: Int, container: StateContainer<Value>, queued: Bool = false) {
        precondition(slot < Int32.max, "more than 2³¹ listeners on one container")
        self.slot = Int32(truncatingIfNeeded: slot)
        self.container = container
        super.init(queued: queued)
    }

    override func detach() {
        guard let container else { return }
        container.removeListener(container, self)
    }
}
