import Synchronization

extension StateContainer {
    /// Calls `listener` after every change of the value, until the returned token is cancelled or released.
    ///
    /// ```swift
    /// let token = theme.observe(initial: true, on: .queue(renderQueue)) { color in render(color) }
    /// ```
    ///
    /// The listener receives the value the change produced. If it reads ``value`` instead, it sees that value or
    /// a later one, never an older one.
    ///
    /// - Parameters:
    ///   - initial: Also call `listener` with the current value first. With ``Delivery/synchronous`` delivery this
    ///     happens before `observe` returns, unless the container is delivering a change at that moment (then it
    ///     happens right after that change).
    ///   - delivery: Where `listener` runs; see ``Delivery``.
    ///   - listener: Receives the new value.
    /// - Returns: The token that keeps `listener` registered.
    /// - Complexity: O(1) to subscribe and to cancel.
    public func observe(
        initial: Bool = false,
        on delivery: Delivery = .synchronous,
        _ listener: @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        SubscriptionToken(register(initial: initial, delivery: delivery, listener))
    }

    /// Registers the observer that calls `listener` with `delivery`.
    func register(
        initial: Bool,
        delivery: Delivery,
        _ listener: @escaping @Sendable (Value) -> Void
    ) -> ContainerObserver<Value> {
        let queue = delivery.serialQueue(label: "Statehouse.\(key)")
        return register(initial: initial) { slot in
            if let queue {
                QueuedObserver(slot: slot, container: self, queue: queue, body: listener)
            } else {
                ClosureObserver(slot: slot, container: self, body: listener)
            }
        }
    }

    /// Registers the observer `make` builds, and delivers its initial value if asked.
    func register<Observer: ContainerObserver<Value>>(
        initial: Bool,
        make: (_ slot: Int) -> Observer
    ) -> Observer {
        let (observer, round) = state.withLock { state in
            state.add(initial: initial, make: make)
        }
        if let round { deliver(round) }
        return observer
    }
}
