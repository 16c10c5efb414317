import Synchronization

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
///
/// Tokens are made by the library only; the class is not open for subclassing outside it.
//
// Inside the library the token is the registration itself, so a subscription costs one object, not a token and an
// object behind it. It owns the guarantee "after `cancel()` returns, no further call starts": each call publishes the
// thread making it before it checks the cancelled flag; `cancel()` sets the flag before it looks for a call in
// progress. Both sides use sequentially consistent atomics, so at least one of them sees the other (Dekker's
// handshake): either the caller sees the flag and skips the call, or `cancel()` sees the call and waits for it.
//
// Calls to one subscription never overlap: containers and stores deliver from one thread at a time, and queued
// deliveries go through a serial queue. That is why one slot for "the thread inside a call" is enough. For a queued
// subscription, handing a change to its queue is not a call: the delivering thread only enqueues (see
// `deliver(on:_:)`), and the handshake happens on the queue, around the listener itself. (When the enqueueing took
// the slot too, it cleared the queue thread's entry, and `cancel()` returned while the listener still ran.)
//
// The listener itself lives in the owner's table, not here: removing it from the table on cancellation releases it
// and whatever it captured. The table does not own the token either (see `ObserverTable.Entry`). Subclasses know
// their owner and override `detach()` to leave it; the final ones a user holds cancel in their `deinit`, where their
// stored properties still live (a base class's `deinit` runs after a subclass's properties are destroyed).
//
// @unchecked because the class is not final, which checked `Sendable` requires. It is safe: all mutable state here
// is in atomics (`callingThread`, `cancellation`), the rest is `let`, and subclasses add only `let` properties, weak
// references, or state they guard with their owner's lock (each says why where it declares the conformance).
public class SubscriptionToken: Hashable, @unchecked Sendable {
    @usableFromInline let callingThread = Atomic<UInt>(0)
    /// ``live``, ``cancelled``, or ``cancelledWithoutWaiting``: the flag of the handshake, and whether a cancellation
    /// may wait for a call in progress.
    @usableFromInline let cancellation = Atomic<UInt8>(live)
    @usableFromInline static var live: UInt8 { 0 }
    @usableFromInline static var cancelled: UInt8 { 1 }
    /// Cancelled by ``cancelWithoutWaiting()``: later cancellations do not wait either (see there).
    @usableFromInline static var cancelledWithoutWaiting: UInt8 { 2 }
    /// Whether the listener runs on a queue: delivering then only enqueues the call, which ``invoke(on:_:)`` guards
    /// on the queue.
    @usableFromInline let isQueued: Bool
    /// Whether the listener in the owner's table holds this object: the table may then take a reference to it from
    /// its entry (see `ObserverTable.Entry`). A token the user holds is held by the user only.
    @usableFromInline let isHeldByItsListener: Bool

    @usableFromInline
    init(queued: Bool = false, heldByItsListener: Bool = false) {
        isQueued = queued
        isHeldByItsListener = heldByItsListener
    }

    /// Stops the listener. Calling it again does nothing.
    ///
    /// Returns once no call of the listener is in progress on another thread. One exception: if the call it would
    /// wait for is itself waiting, directly or through other such waits, in a `cancel()` that waits for this thread's
    /// call (two listeners cancelling each other from inside their calls), it returns without waiting, since neither
    /// wait could ever end.
    ///
    /// Not from a task-cancellation handler (`withTaskCancellationHandler`'s `onCancel`) whose task the listener
    /// resumes: Swift runs the handler holding that task's lock, a call in progress that resumes the task waits for
    /// the lock, and `cancel()` waits for that call, so neither ends. To feed a task, iterate a container's or a
    /// store's `values` instead: ending its loop stops the listener without waiting.
    ///
    /// - Complexity: O(1).
    public final func cancel() {
        // The load first spares a cancelled subscription the atomic exchange: a token cancelled, then let go, cancels
        // twice. Sequentially consistent, as the handshake's other accesses are: an acquiring load that saw the flag
        // set elsewhere could, in the memory model, still miss a call that started before it was set (a plain load
        // on x86 either way).
        var state = cancellation.load(ordering: .sequentiallyConsistent)
        if state == Self.live {
            state = cancellation.compareExchange(
                expected: Self.live, desired: Self.cancelled, ordering: .sequentiallyConsistent
            ).original
            if state == Self.live { detach() }
        }
        // Every cancel waits, not only the one that set the flag: a second cancel on another thread returned while
        // the call the first one waited for still ran.
        if state != Self.cancelledWithoutWaiting { waitForCallInProgress() }
    }

    /// Whether the listener was stopped by ``cancel()``, or by the end of what it listened to.
    public var isCancelled: Bool {
        cancellation.load(ordering: .sequentiallyConsistent) != Self.live
    }

    /// Keeps the token alive in `set` until it is removed from there or `set` goes away.
    public final func store(in set: inout Set<SubscriptionToken>) {
        set.insert(self)
    }

    /// Keeps the token alive in `array` until it is removed from there or `array` goes away.
    public final func store(in array: inout [SubscriptionToken]) {
        array.append(self)
    }

    public static func == (lhs: SubscriptionToken, rhs: SubscriptionToken) -> Bool {
        lhs === rhs
    }

    public final func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }

    /// Stops delivery without waiting for a call in progress on another thread, now or in any later ``cancel()``;
    /// idempotent.
    ///
    /// Only for a listener of the library's own whose call may safely outlive its cancellation: an async stream's,
    /// whose late `yield` the ended stream drops. A stream is cancelled from its task's cancellation handler, which
    /// runs with that task's status lock held, and the call ``cancel()`` would wait for may be a `yield` that is
    /// resuming that very task, so waiting for its lock: neither wait would ever end. A later `cancel()` may run
    /// there too (the handler lets go of the token it captured), so it must not wait either.
    final func cancelWithoutWaiting() {
        if cancellation.exchange(Self.cancelledWithoutWaiting, ordering: .sequentiallyConsistent) == Self.live {
            detach()
        }
    }

    /// Whether this was cancelled by ``cancelWithoutWaiting()``: what a token that cancels others passes on.
    final var wasCancelledWithoutWaiting: Bool {
        cancellation.load(ordering: .sequentiallyConsistent) == Self.cancelledWithoutWaiting
    }

    /// Marks the subscription cancelled because its owner ended, with nothing to detach from and no call to wait
    /// for. Only atomics: it is safe on a token whose `deinit` has run, while its memory is kept (see
    /// `ObserverTable.Entry`).
    @usableFromInline
    final func markOwnerEnded() {
        _ = cancellation.compareExchange(
            expected: Self.live, desired: Self.cancelled, ordering: .sequentiallyConsistent
        )
    }

    /// Returns once no call in progress on another thread is left for ``cancel()`` to wait for. Overridden by tokens
    /// whose calls are other tokens' (``CombinedSubscription``, ``OwningToken``).
    func waitForCallInProgress() {
        waitForListenerCall()
    }

    /// Removes the subscription's listener from its owner. Called once, by the first ``cancel()`` or
    /// ``cancelWithoutWaiting()``.
    func detach() {}

    /// Called once when the owner is deallocated while the subscription is registered, before it is cancelled. Only
    /// for subscriptions held by their listener (``isHeldByItsListener``).
    func ownerDidEnd() {}
}
