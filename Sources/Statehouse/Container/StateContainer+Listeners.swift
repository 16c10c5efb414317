import Dispatch
import Synchronization

extension StateContainer {
    /// Tells `listener` about every later change, on its ``StateListener/stateListenerQueue``, while it lives.
    ///
    /// The container holds `listener` weakly. Attaching a listener that is already attached does nothing.
    public func attach(listener: any StateListener) {
        let id = ObjectIdentifier(listener)
        // A serial queue of its own keeps the calls in order even if the listener's queue is concurrent.
        let queue = DispatchQueue(label: "Statehouse.\(key).listener", target: listener.stateListenerQueue)
        let replaced: ContainerState<Value>.Removed? = locked { state in
            guard state.subscription(of: id) == nil else { return nil }
            let subscription = ListenerSubscription(
                slot: state.observers.nextSlot, container: self, listener: listener
            )
            _ = state.add(subscription, body: subscription.deliverer(on: queue), initial: false)
            return state.attach(subscription)
        }
        replaced?.subscription.cancel()
    }

    /// Stops telling `listener` about changes. Deliveries already queued for it are skipped.
    public func detach(listener: any StateListener) {
        locked { $0.subscription(of: ObjectIdentifier(listener)) }?.cancel()
    }
}

/// The registration of a weakly held ``StateListener``: the container never retains the listener, and a delivery
/// that finds it gone cancels the registration.
// @unchecked Sendable is safe: this subclass adds only `let` and `weak let` properties, never reassigned; loading a
// weak reference is thread-safe in the Swift runtime.
final class ListenerSubscription<Value: Sendable>: ContainerSubscription<Value>, @unchecked Sendable {
    let listenerID: ObjectIdentifier
    private let listener: WeakListener
    /// The container the listener is told about, on its queue, if it still lives: a weak reference, which the
    /// other subscriptions avoid (see ``ContainerLink``), since the listener needs the container itself.
    private weak let container: StateContainer<Value>?

    init(slot: Int, container: StateContainer<Value>, listener: any StateListener) {
        self.listenerID = ObjectIdentifier(listener)
        self.listener = WeakListener(listener)
        self.container = container
        super.init(slot: slot, container: container, queued: true, heldByItsListener: true)
    }

    var isListenerAlive: Bool { listener.object != nil }

    /// The table entry's listener: hands each change to `queue`, where the listener is told.
    func deliverer(on queue: DispatchQueue) -> ContainerState<Value>.Listener {
        { [self] _ in
            queue.async { [self] in
                guard let container, let object = listener.object else {
                    cancel()
                    return
                }
                invoke(on: currentThreadIdentity()) { object.stateModified(container) }
            }
        }
    }

    override func detach() {
        let removed = link.locked { $0?.detach(self) }
        // Let go outside every lock (see `ObserverTable.remove`).
        withExtendedLifetime(removed) {}
    }
}

/// A weak reference to a listener that may cross threads.
///
/// @unchecked because `StateListener` objects need not be `Sendable`. The reference is only loaded on the
/// listener's own queue, where the listener asked to be called, or compared with `nil`; loading and releasing a
/// weak reference is thread-safe in the Swift runtime.
private final class WeakListener: @unchecked Sendable {
    weak let object: (any StateListener)?

    init(_ object: any StateListener) {
        self.object = object
    }
}
