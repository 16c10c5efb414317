import Dispatch
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
    @inlinable
    public func observe(
        initial: Bool = false,
        on delivery: Delivery = .synchronous,
        _ listener: consuming @escaping @Sendable (Value) -> Void
    ) -> SubscriptionToken {
        guard let queue = delivery.serialQueue(label: key) else {
            // Moved into the table, not copied (see `ListenerHandOff`).
            var handOff: ListenerHandOff<Value>? = ListenerHandOff(consume listener)
            // The registration is the token: the caller's reference is its only one (see `ContainerToken`).
            return register(initial: initial, make: { ContainerToken(slot: $0, container: $1) }) { _ in
                handOff.take()!.listener
            }
        }
        // The listener's closure holds its registration, to guard the call on the queue: a token of its own cancels
        // it (see `OwningToken`).
        let listener = consume listener
        return OwningToken(register(initial: initial) { slot, container in
            ContainerSubscription(slot: slot, container: container, queued: true, heldByItsListener: true)
        } body: { subscription in
            { value in
                queue.async { subscription.invoke(on: currentThreadIdentity()) { listener(value) } }
            }
        })
    }

    /// Registers the subscription `make` builds and the listener `body` makes for it; delivers the initial value
    /// if asked.
    @inlinable
    func register<Made: ContainerSubscription<Value>>(
        initial: Bool,
        make: (_ slot: Int, _ container: StateContainer<Value>) -> Made,
        body: (Made) -> ContainerState<Value>.Listener
    ) -> Made {
        let (subscription, round) = locked { state in
            let subscription = make(state.observers.nextSlot, self)
            return (subscription, state.add(subscription, body: body(subscription), initial: initial))
        }
        if let round { deliver(round) }
        return subscription
    }
}

extension Delivery {
    /// The serial queue that keeps one subscription's calls in order, or `nil` for synchronous delivery.
    ///
    /// A queue the caller passes may be concurrent, so each subscription gets a serial queue targeting it.
    @usableFromInline
    func serialQueue(label: @autoclosure () -> String) -> DispatchQueue? {
        switch self {
        case .synchronous: nil
        case .queue(let queue): DispatchQueue(label: "Statehouse.\(label())", target: queue)
        case .mainActor: DispatchQueue.main
        }
    }
}

/// A listener on its way into a container's table, moved, not copied: a copy would retain and release its context,
/// two atomic operations on every subscribe.
///
/// `observe` takes the listener `consuming`, but the table is reached inside the lock's closure, and a closure can
/// move a captured value out only through an `Optional`'s `take()`. An `Optional` of the function type itself would
/// store it at the most general calling convention: taking it out wrapped it in a reabstraction thunk, one
/// allocation more. In a struct, the function keeps its own.
@usableFromInline
struct ListenerHandOff<Value>: Sendable {
    @usableFromInline let listener: @Sendable (Value) -> Void

    @inlinable
    init(_ listener: consuming @escaping @Sendable (Value) -> Void) {
        self.listener = listener
    }
}
