import Synchronization

extension StateContainer {
    /// The current value, then every change, as an async sequence.
    ///
    /// ```swift
    /// for await color in theme.values { render(color) }
    /// ```
    ///
    /// Each use of the property subscribes anew. Every change is buffered until the loop takes it, so a slow loop
    /// sees every value in order. The subscription ends when the loop ends or its task is cancelled, and the
    /// sequence finishes when the container is deallocated.
    public var values: AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .unbounded)
        let subscription = register(initial: true) { slot, container in
            StreamSubscription(slot: slot, container: container, continuation: continuation)
        } body: { _ in
            { continuation.yield($0) }
        }
        continuation.onTermination = { _ in subscription.cancel() }
        return stream
    }
}

/// The registration behind ``StateContainer/values``: finishes the stream when the container goes away.
// @unchecked restates Subscription's conformance: this subclass adds only a `let` property.
final class StreamSubscription<Value: Sendable>: ContainerSubscription<Value>, @unchecked Sendable {
    private let continuation: AsyncStream<Value>.Continuation

    init(slot: Int, container: StateContainer<Value>, continuation: AsyncStream<Value>.Continuation) {
        self.continuation = continuation
        super.init(slot: slot, container: container)
    }

    override func ownerDidEnd() {
        continuation.finish()
    }
}
