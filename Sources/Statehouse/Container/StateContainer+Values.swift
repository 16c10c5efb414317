import Synchronization

extension StateContainer {
    /// The current value, then every change, as an async sequence.
    ///
    /// ```swift
    /// for await color in theme.values { render(color) }
    /// ```
    ///
    /// Each use of the property subscribes anew. Every change delivered is buffered until the loop takes it, so a
    /// slow loop sees them in order; a loop that may fall far behind should bound its buffer with
    /// ``values(bufferingPolicy:)``. The subscription ends when the loop ends or its task is cancelled, and the
    /// sequence finishes when the container is deallocated.
    public var values: AsyncStream<Value> {
        values(bufferingPolicy: .unbounded)
    }

    /// The current value, then every change, as an async sequence whose buffer follows `bufferingPolicy`.
    ///
    /// ```swift
    /// for await settings in container.values(bufferingPolicy: .bufferingNewest(1)) { apply(settings) }
    /// ```
    ///
    /// `.bufferingNewest(1)` suits a loop that only needs to catch up with the latest value: memory stays constant
    /// however far the loop falls behind, and it still ends on the last value.
    ///
    /// - Parameter bufferingPolicy: What to keep while the loop is busy; `.unbounded` keeps everything.
    public func values(bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        let subscription = register(initial: true) { slot, container in
            StreamSubscription(slot: slot, container: container, continuation: continuation)
        } body: { subscription in
            // The listener holds its subscription, which nothing else does until the stream ends (see
            // `ObserverTable.Entry`).
            { value in
                withExtendedLifetime(subscription) { _ = continuation.yield(value) }
            }
        }
        // Not `cancel()`, which waits for a delivery in progress: see `SubscriptionToken.cancelWithoutWaiting()`.
        continuation.onTermination = { _ in subscription.cancelWithoutWaiting() }
        return stream
    }
}

/// The registration behind ``StateContainer/values``: finishes the stream when the container goes away.
// @unchecked Sendable is safe: this subclass adds only a `let` continuation, which is Sendable and never reassigned.
final class StreamSubscription<Value: Sendable>: ContainerSubscription<Value>, @unchecked Sendable {
    private let continuation: AsyncStream<Value>.Continuation

    init(slot: Int, container: StateContainer<Value>, continuation: AsyncStream<Value>.Continuation) {
        self.continuation = continuation
        super.init(slot: slot, container: container, heldByItsListener: true)
    }

    override func ownerDidEnd() {
        continuation.finish()
    }
}
