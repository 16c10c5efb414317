/// Several listeners behind one token: cancelling it cancels each, with each one's guarantee (no call of any of them
/// starts after `cancel()` returns, or is still running).
///
/// Its own handshake is never used: it makes no calls. Its calls in progress are its parts', so waiting for them is
/// cancelling the parts again, which a cancel that did not detach (a second one, on another thread) does too.
// @unchecked Sendable is safe: this subclass adds only a `let` array of tokens, set in `init` and never changed, and
// the tokens are Sendable; SubscriptionToken's own state is atomics.
final class CombinedSubscription: SubscriptionToken, @unchecked Sendable {
    private let parts: [SubscriptionToken]

    init(_ parts: [SubscriptionToken]) {
        self.parts = parts
        super.init()
    }

    deinit {
        cancel()
    }

    /// Cancelled, or every part is: the parts' owners may have ended (a container that ended cancels its tokens,
    /// and never sees this one). A combination of nothing is cancelled only by ``cancel()``.
    override var isCancelled: Bool {
        super.isCancelled || (!parts.isEmpty && parts.allSatisfy(\.isCancelled))
    }

    override func detach() {
        for part in parts { part.cancel() }
    }

    override func waitForCallInProgress() {
        detach()
    }
}

extension SubscriptionToken {
    /// One token for `tokens`: cancelling or releasing it cancels them all. For listeners of the library's own
    /// modules made of several registrations (StatehouseMetrics counts on the changing thread and logs on a queue).
    package static func combining(_ tokens: [SubscriptionToken]) -> SubscriptionToken {
        CombinedSubscription(tokens)
    }
}
