import Synchronization

/// What a ``SubscriptionToken`` cancels: one listener registered with a container or a store.
///
/// The class owns the guarantee "after `cancel()` returns, no further call starts". Each call publishes the thread
/// making it before it checks the cancelled flag; `cancel()` sets the flag before it looks for a call in progress.
/// Both sides use sequentially consistent atomics, so at least one of them sees the other (Dekker's handshake):
/// either the caller sees the flag and skips the call, or `cancel()` sees the call and waits for it to end. A listener
/// that cancels itself from inside its own call does not wait for itself.
///
/// Calls to one subscription never overlap: containers and stores deliver from one thread at a time, and queued
/// deliveries go through a serial queue. That is why one slot for "the thread inside a call" is enough.
///
/// Cancelling also releases what the subscription holds (its closure and what that captures) through
/// ``releaseResources()``, once no call can use it any more: at once, or when the listener's own call ends if it
/// cancelled itself.
///
/// Subclasses add what they deliver and override ``detach()`` to leave their owner.
// @unchecked because subclasses are generic and non-final; all mutable state here is in atomics, and subclasses
// only add `let` properties or weak references, which are safe to read from any thread.
class Subscription: @unchecked Sendable {
    private let callingThread = Atomic<UInt>(0)
    private let cancelled = Atomic<Bool>(false)
    /// Set by a listener that cancels itself: the call in progress releases the resources when it ends.
    private let releaseAfterCall = Atomic<Bool>(false)

    init() {}

    /// Whether ``cancel()`` has been called.
    final var isCancelled: Bool {
        cancelled.load(ordering: .sequentiallyConsistent)
    }

    /// Runs `call` unless the subscription was cancelled; `thread` is ``currentThreadIdentity()`` of the caller.
    @inline(__always)
    final func invoke(on thread: UInt, _ call: () -> Void) {
        callingThread.store(thread, ordering: .sequentiallyConsistent)
        if !cancelled.load(ordering: .sequentiallyConsistent) {
            call()
        }
        callingThread.store(0, ordering: .releasing)
        if releaseAfterCall.load(ordering: .relaxed) {
            releaseResources()
        }
    }

    /// Stops delivery. Returns once no call is in progress on another thread; idempotent.
    final func cancel() {
        guard !cancelled.exchange(true, ordering: .sequentiallyConsistent) else { return }
        detach()
        let me = currentThreadIdentity()
        while true {
            switch callingThread.load(ordering: .sequentiallyConsistent) {
            case 0:
                releaseResources()
                return
            case me:
                releaseAfterCall.store(true, ordering: .relaxed)
                return
            default:
                yieldThread()
            }
        }
    }

    /// Removes the subscription from its owner. Called once, by the first ``cancel()``.
    func detach() {}

    /// Drops what the subscription holds for its calls. Called once, after the last call, on the cancelling thread
    /// (or, for a listener that cancelled itself, on the thread of its last call). Calls that start afterwards are
    /// skipped, so overrides may clear state that calls read.
    func releaseResources() {}
}
