/// What `StatehouseTesting`'s `TestStore` needs of the store it runs, beyond the public API.
extension Store {
    /// Cancels every running effect; the actions they queued and the store has not applied are dropped.
    package func cancelAllEffects() {
        effects.cancelAll()
    }

    /// Returns once the work queued before the call (actions, subscriptions) is done.
    package func waitForQueuedWork() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            submit(.run { continuation.resume() })
        }
    }
}
