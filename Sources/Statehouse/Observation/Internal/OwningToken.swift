/// The token of a subscription that something else holds too, or that a store registers later: it owns the
/// subscription, and cancels it when cancelled or let go.
///
/// A subscription is its own token when only the user holds it (a container's synchronous `observe`). Otherwise its
/// `deinit` cannot be the signal that the user let go: a queued listener's closure captures its subscription, and a
/// store's registration, queued behind the store's work, holds it until it runs. Those subscriptions stay in their
/// owner's table until this token cancels them, which is what lets the table reach them (see
/// `ObserverTable.Entry`).
// @unchecked Sendable is safe: this subclass adds only a `let` reference to a token (Sendable), set in `init` and
// never changed; SubscriptionToken's own state is atomics.
@usableFromInline
final class OwningToken: SubscriptionToken, @unchecked Sendable {
    /// The subscription whose listener runs.
    @usableFromInline let subscription: SubscriptionToken

    @usableFromInline
    init(_ subscription: SubscriptionToken) {
        self.subscription = subscription
        super.init()
    }

    deinit {
        cancel()
    }

    /// The subscription's state: its owner may have cancelled it (a container that ended).
    override var isCancelled: Bool {
        subscription.isCancelled
    }

    override func detach() {
        // A stream's token passes on that nobody may wait (see `cancelWithoutWaiting()`).
        if wasCancelledWithoutWaiting {
            subscription.cancelWithoutWaiting()
        } else {
            subscription.cancel()
        }
    }

    override func waitForCallInProgress() {
        subscription.cancel()
    }
}
