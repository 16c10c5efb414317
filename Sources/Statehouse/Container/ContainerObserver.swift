import Dispatch

/// A listener registered with a ``StateContainer``: the part of a subscription the container delivers to.
///
/// The subclasses differ only in where and how they call: ``ClosureObserver`` on the delivering thread,
/// ``QueuedObserver`` on a serial queue, ``ListenerObserver`` on a weakly held object's queue, ``StreamObserver``
/// into an async sequence.
// @unchecked restates Subscription's conformance: this subclass adds only `let` and `weak let` properties.
class ContainerObserver<Value: Sendable>: Subscription, @unchecked Sendable {
    let slot: Int
    weak let container: StateContainer<Value>?

    init(slot: Int, container: StateContainer<Value>) {
        self.slot = slot
        self.container = container
    }

    /// Delivers one change. `thread` is the delivering thread, for ``Subscription/invoke(on:_:)``.
    func receive(_ value: Value, on thread: UInt) {}

    /// Called once when the container is deallocated while this observer is still registered.
    func containerDidEnd() {}

    override func detach() {
        container?.remove(self)
    }
}

/// Calls a closure on the thread that delivers the change.
// @unchecked restates Subscription's conformance. `body` is read only inside `invoke`, and cleared only by
// `releaseResources`, which `Subscription` runs after the last call and before none can start.
final class ClosureObserver<Value: Sendable>: ContainerObserver<Value>, @unchecked Sendable {
    private var body: (@Sendable (Value) -> Void)?

    init(slot: Int, container: StateContainer<Value>, body: @escaping @Sendable (Value) -> Void) {
        self.body = body
        super.init(slot: slot, container: container)
    }

    override func receive(_ value: Value, on thread: UInt) {
        invoke(on: thread) { body?(value) }
    }

    override func releaseResources() {
        body = nil
    }
}

/// Calls a closure asynchronously on a serial queue, so calls keep the order of the changes.
// @unchecked restates Subscription's conformance; `body` is guarded as in `ClosureObserver`.
final class QueuedObserver<Value: Sendable>: ContainerObserver<Value>, @unchecked Sendable {
    private let queue: DispatchQueue
    private var body: (@Sendable (Value) -> Void)?

    init(slot: Int, container: StateContainer<Value>, queue: DispatchQueue, body: @escaping @Sendable (Value) -> Void) {
        self.queue = queue
        self.body = body
        super.init(slot: slot, container: container)
    }

    override func receive(_ value: Value, on thread: UInt) {
        queue.async { [self] in
            invoke(on: currentThreadIdentity()) { body?(value) }
        }
    }

    override func releaseResources() {
        body = nil
    }
}

extension Delivery {
    /// The serial queue that keeps one subscription's calls in order, or `nil` for synchronous delivery.
    ///
    /// A queue the caller passes may be concurrent, so each subscription gets a serial queue targeting it.
    func serialQueue(label: String) -> DispatchQueue? {
        switch self {
        case .synchronous: nil
        case .queue(let queue): DispatchQueue(label: label, target: queue)
        case .mainActor: DispatchQueue.main
        }
    }
}
