/// Keeps a listener registered: cancel it, or let it go, to stop the calls.
///
/// Every `observe` and `subscribe` returns a token. The listener stays registered while the token lives; releasing
/// the last reference to the token cancels it, so a token stored in a view or view model ends the subscription
/// together with its owner.
///
/// ```swift
/// var tokens = Set<SubscriptionToken>()
/// theme.observe { print("theme is now", $0) }.store(in: &tokens)
/// ```
///
/// After ``cancel()`` returns, no further call of the listener starts, on any thread. A call already running on
/// another thread is allowed to finish first: `cancel()` waits for it, unless the listener is cancelling itself, or
/// that call is itself waiting to cancel the caller's own listener (two listeners cancelling each other would
/// otherwise wait for each other forever).
public final class SubscriptionToken: Hashable, Sendable {
    @usableFromInline let subscription: Subscription

    @usableFromInline
    init(_ subscription: Subscription) {
        self.subscription = subscription
    }

    deinit {
        withSubscription { $0.cancel() }
    }

    /// Stops the listener. Calling it again does nothing.
    ///
    /// Not from a task-cancellation handler (`withTaskCancellationHandler`'s `onCancel`) whose task the listener
    /// resumes: Swift runs the handler holding that task's lock, a call in progress that resumes the task waits for
    /// the lock, and `cancel()` waits for that call, so neither ends. To feed a task, iterate a container's or a
    /// store's `values` instead: ending its loop stops the listener without waiting.
    ///
    /// - Complexity: O(1).
    public func cancel() {
        withSubscription { $0.cancel() }
    }

    /// Runs `body` with the subscription, not retained again: the token's own reference keeps it alive for the call,
    /// and only the token's end lets go of that reference. Retained, cancelling cost an atomic retain and release
    /// (about 10 ns, measured on a subscribe + cancel of 144 ns).
    @inline(__always)
    private func withSubscription(_ body: (Subscription) -> Void) {
        Unmanaged.passUnretained(subscription)._withUnsafeGuaranteedRef(body)
    }

    /// Whether the listener was stopped by ``cancel()``.
    public var isCancelled: Bool {
        subscription.isCancelled
    }

    /// Keeps the token alive in `set` until it is removed from there or `set` goes away.
    public func store(in set: inout Set<SubscriptionToken>) {
        set.insert(self)
    }

    /// Keeps the token alive in `array` until it is removed from there or `array` goes away.
    public func store(in array: inout [SubscriptionToken]) {
        array.append(self)
    }

    public static func == (lhs: SubscriptionToken, rhs: SubscriptionToken) -> Bool {
        lhs === rhs
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
