/// A callback that the library calls from a thread of its own, and whose ``cancel()`` keeps the promise of a
/// subscription token: once it returns, no call starts, and none is still running on another thread.
///
/// For callbacks outside containers and stores, such as a `DatabaseChangeMonitor`'s, which several followers share
/// one thread to be called on. The calls must not overlap (make them from one serial queue); a call that cancels its
/// own callback does not wait for itself.
package final class GuardedCallback: Sendable {
    /// The handshake of ``SubscriptionToken``; the callback is here rather than in an owner's table, so nothing
    /// needs detaching.
    private let handshake = SubscriptionToken()
    private let body: @Sendable () -> Void

    package init(_ body: @escaping @Sendable () -> Void) {
        self.body = body
    }

    /// Calls the callback, unless it was cancelled.
    package func callAsFunction() {
        handshake.invoke(on: currentThreadIdentity(), body)
    }

    /// Stops the calls; returns once none is running on another thread. Calling it again does nothing.
    package func cancel() {
        handshake.cancel()
    }
}
