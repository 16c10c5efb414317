extension Store {
    /// The value at `keyPath` now, then each time a dispatch changes it, as an async sequence.
    ///
    /// ```swift
    /// for await count in store.values(\.count) { label.text = "\(count)" }
    /// ```
    ///
    /// The sequence follows the rules of ``subscribe(_:initial:on:_:)``: the current value first, then every change
    /// in order, never the same value twice in a row, ending with the latest. Each call subscribes anew. Like a
    /// subscription token, the sequence keeps the store alive (`for await x in app.scope(…).values(\.x)` needs no
    /// other reference); the subscription ends, and the store is let go, when the loop ends, its task is cancelled,
    /// or the sequence is dropped.
    ///
    /// - Parameters:
    ///   - keyPath: What to select. A key-path literal is `Sendable`.
    ///   - bufferingPolicy: What to keep while the loop is busy; `.unbounded` (the default) keeps every change, and
    ///     `.bufferingNewest(1)` only the latest, for a loop that only needs to catch up.
    /// - Returns: The selected values.
    public func values<Value: Equatable & Sendable>(
        _ keyPath: any KeyPath<State, Value> & Sendable,
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Value> {
        stream(bufferingPolicy: bufferingPolicy) { subscribe(keyPath, $0) }
    }

    /// What `select` picks from the state now, then each time it changes, as an async sequence.
    ///
    /// ```swift
    /// let pairs = store.values(select: { ($0.count, $0.name) }, isDuplicate: ==)
    /// for await (count, name) in pairs { print(name, count) }
    /// ```
    ///
    /// The sequence follows the rules of ``subscribe(select:isDuplicate:initial:on:_:)``; see
    /// ``values(_:bufferingPolicy:)``.
    ///
    /// - Parameters:
    ///   - select: Picks what the loop needs from the state.
    ///   - isDuplicate: Whether two selections are the same; `{ _, _ in false }` yields after every dispatch.
    ///   - bufferingPolicy: What to keep while the loop is busy; `.unbounded` (the default) keeps every change.
    /// - Returns: The selections.
    public func values<Value: Sendable>(
        select: @escaping @Sendable (State) -> Value,
        isDuplicate: @escaping @Sendable (Value, Value) -> Bool,
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded
    ) -> AsyncStream<Value> {
        stream(bufferingPolicy: bufferingPolicy) { subscribe(select: select, isDuplicate: isDuplicate, $0) }
    }

    /// The state now, then after every dispatch, as an async sequence (`State` is not `Equatable`, so every dispatch
    /// counts as a change, as for `subscribe(initial:on:_:)`).
    public var values: AsyncStream<State> {
        values(bufferingPolicy: .unbounded)
    }

    /// The state now, then after every dispatch, as an async sequence whose buffer follows `bufferingPolicy`
    /// (`State` is not `Equatable`, so every dispatch counts as a change).
    ///
    /// - Parameter bufferingPolicy: What to keep while the loop is busy; `.unbounded` keeps every change.
    public func values(bufferingPolicy: AsyncStream<State>.Continuation.BufferingPolicy) -> AsyncStream<State> {
        values(select: { $0 }, isDuplicate: { _, _ in false }, bufferingPolicy: bufferingPolicy)
    }

    /// A stream fed by the subscription `subscribe` makes with the listener it is given; cancelled when the stream
    /// terminates (the loop ends, its task is cancelled, or the last copy of the stream is released), and finishing
    /// the stream when the store lets go of the listener.
    ///
    /// The subscription keeps the store alive, and the store its listener: the cycle ends with the stream, whose
    /// termination cancels the subscription, without waiting for a `yield` in progress (it may be resuming the very
    /// task whose cancellation ended the stream). The listener's ``StreamEnd`` then finishes the stream after its last
    /// value.
    private func stream<Value: Sendable>(
        bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy,
        subscribe: (@escaping @Sendable (Value) -> Void) -> SubscriptionToken
    ) -> AsyncStream<Value> {
        let (stream, continuation) = AsyncStream.makeStream(of: Value.self, bufferingPolicy: bufferingPolicy)
        let end = StreamEnd(continuation)
        let token = subscribe { value in end.continuation.yield(value) }
        // Not `token.cancel()`, which waits for a delivery in progress: see
        // `SubscriptionToken.cancelWithoutWaiting()`.
        continuation.onTermination = { _ in token.cancelWithoutWaiting() }
        return stream
    }
}

extension Store where State: Equatable {
    /// The state now, then after every dispatch that changed it, as an async sequence.
    ///
    /// ```swift
    /// for await state in store.values { render(state) }
    /// ```
    ///
    /// Every change is buffered until the loop takes it; a loop that may fall far behind should bound its buffer
    /// with `values(bufferingPolicy:)`. See ``values(_:bufferingPolicy:)`` for the rules.
    public var values: AsyncStream<State> {
        values(bufferingPolicy: .unbounded)
    }

    /// The state now, then after every dispatch that changed it, as an async sequence whose buffer follows
    /// `bufferingPolicy`.
    ///
    /// ```swift
    /// for await state in store.values(bufferingPolicy: .bufferingNewest(1)) { render(state) }
    /// ```
    ///
    /// - Parameter bufferingPolicy: What to keep while the loop is busy; `.unbounded` keeps every change.
    public func values(bufferingPolicy: AsyncStream<State>.Continuation.BufferingPolicy) -> AsyncStream<State> {
        values(\.self, bufferingPolicy: bufferingPolicy)
    }
}

/// Finishes a store's value stream when released, which its listener is when the store no longer holds it.
final class StreamEnd<Value: Sendable>: Sendable {
    let continuation: AsyncStream<Value>.Continuation

    init(_ continuation: AsyncStream<Value>.Continuation) {
        self.continuation = continuation
    }

    deinit {
        continuation.finish()
    }
}
