/// A listener's registration with a ``StateContainer``: where it sits in the container's table.
// @unchecked restates Subscription's conformance: this subclass adds only `let` properties.
@usableFromInline class ContainerSubscription<Value: Sendable>: Subscription, @unchecked Sendable {
    /// 32 bits, so that the object fits a 48-byte allocation with the fields it inherits.
    @usableFromInline let slot: Int32
    /// Reaches the container's listeners without keeping the container alive (see ``ContainerLink``).
    @usableFromInline let link: ContainerLink<Value>

    @inlinable
    init(slot: Int, container: StateContainer<Value>, queued: Bool = false) {
        precondition(slot < Int32.max, "more than 2³¹ listeners on one container")
        self.slot = Int32(truncatingIfNeeded: slot)
        self.link = container.link
        super.init(queued: queued)
    }

    override func detach() {
        // Borrowed, not retained again (a retain and a release, 34 of 1,127 instructions per subscribe + cancel): this
        // subscription's own reference keeps the link alive for the call.
        let removed = Unmanaged.passUnretained(link)._withUnsafeGuaranteedRef { $0.removeListener($0, self) }
        // Let go outside the lock: the listener may hold the last reference to another token of this container,
        // whose cancellation takes that lock (see `ObserverTable.remove`).
        withExtendedLifetime(removed) {}
    }
}
