import Dispatch
import Synchronization

/// Delivers changes to a weakly held ``StateListener`` on the listener's queue.
///
/// The container never retains the listener. When a delivery finds it gone, the observer removes itself.
// @unchecked restates Subscription's conformance: this subclass adds only `let` and `weak let` properties.
final class ListenerObserver<Value: Sendable>: ContainerObserver<Value>, @unchecked Sendable {
    private let queue: DispatchQueue
    private let listenerID: ObjectIdentifier
    private let listener: WeakListener

    init(slot: Int, container: StateContainer<Value>, listener: any StateListener, queue: DispatchQueue) {
        self.queue = queue
        self.listenerID = ObjectIdentifier(listener)
        self.listener = WeakListener(listener)
        super.init(slot: slot, container: container)
    }

    var isListenerAlive: Bool { listener.object != nil }

    override func receive(_ value: Value, on thread: UInt) {
        queue.async { [self] in
            guard let container, let object = listener.object else {
                cancel()
                return
            }
            invoke(on: currentThreadIdentity()) { object.stateModified(container) }
        }
    }

    override func detach() {
        container?.state.withLock { $0.detach(self, for: listenerID) }
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

extension StateContainer {
    /// Tells `listener` about every later change, on its ``StateListener/stateListenerQueue``, while it lives.
    ///
    /// The container holds `listener` weakly. Attaching a listener that is already attached does nothing.
    public func attach(listener: any StateListener) {
        let id = ObjectIdentifier(listener)
        // A serial queue of its own keeps the calls in order even if the listener's queue is concurrent.
        let queue = DispatchQueue(label: "Statehouse.\(key).listener", target: listener.stateListenerQueue)
        state.withLock { state in
            guard state.attachedObserver(for: id) == nil else { return }
            let (observer, _) = state.add(initial: false) { slot in
                ListenerObserver(slot: slot, container: self, listener: listener, queue: queue)
            }
            state.attach(observer, for: id)
        }
    }

    /// Stops telling `listener` about changes. Deliveries already queued for it are skipped.
    public func detach(listener: any StateListener) {
        let id = ObjectIdentifier(listener)
        state.withLock { $0.attachedObserver(for: id) }?.cancel()
    }
}
