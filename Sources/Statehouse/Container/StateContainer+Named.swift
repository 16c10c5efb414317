import Synchronization

extension StateContainer {
    /// Registers `listener` under `name`, replacing the listener already bound to that name.
    ///
    /// Named listeners need no token: a screen binds under its own name each time it appears, and the new closure
    /// replaces the one from last time instead of adding to it.
    ///
    /// ```swift
    /// userInfo.$name.bind(name: "FirstScreen.title") { title = $0 }
    /// ```
    ///
    /// Once `bind` returns, the replaced closure is never called again. The listener lives as long as the container,
    /// or until ``unbind(name:)``; it is called with ``Delivery/synchronous`` delivery.
    public func bind(name: String, _ listener: @escaping @Sendable (Value) -> Void) {
        bind(name: name, fire: false, listener)
    }

    /// Binds `listener` under `name` like ``bind(name:_:)``, then calls it with the current value.
    public func bindAndFire(name: String, _ listener: @escaping @Sendable (Value) -> Void) {
        bind(name: name, fire: true, listener)
    }

    /// Removes the listener bound to `name`, if any. Once `unbind` returns, it is never called again.
    public func unbind(name: String) {
        locked { $0.unbind(name: name) }?.subscription.cancel()
    }

    private func bind(name: String, fire: Bool, _ listener: @escaping @Sendable (Value) -> Void) {
        // Swapping the name and the table entry in one critical section means no change reaches both closures.
        let (replaced, round) = locked { state in
            let subscription = ContainerSubscription(slot: state.observers.nextSlot, container: self)
            let round = state.add(subscription, body: listener, initial: fire)
            return (state.bind(subscription, name: name), round)
        }
        replaced?.subscription.cancel()
        if let round { deliver(round) }
    }
}
