import Synchronization

extension StateContainer {
    /// The current value, then every change, as an async sequence.
    ///
    /// ```swift
    /// for await color in theme.values { render(color) }
    /// ```
    ///
    /// Each iteration of the sequence subscribes anew. Every change is buffered until the loop takes it, so a slow
    /// loop sees every value in order. The subscription ends when the loop ends or its task is cancelled, and the
    /// sequence finishes when the container is deallocated.
    public var values: AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: .unbounded)
        let observer = register(initial: true) { slot in
            StreamObserver(slot: slot, container: self, continuation: continuation)
        }
        continuation.onTermination = { _ in observer.cancel() }
        return stream
    }
}

/// Yields changes into an `AsyncStream`, and finishes it when the container goes away.
// @unchecked restates Subscription's conformance: this subclass adds only `let` and `weak let` properties.
final class StreamObserver<Value: Sendable>: ContainerObserver<Value>, @unchecked Sendable {
    private let continuation: AsyncStream<Value>.Continuation

    init(slot: Int, container: StateContainer<Value>, continuation: AsyncStream<Value>.Continuation) {
        self.continuation = continuation
        super.init(slot: slot, container: container)
    }

    override func receive(_ value: Value, on thread: UInt) {
        invoke(on: thread) { continuation.yield(value) }
    }

    override func containerDidEnd() {
        continuation.finish()
    }
}
