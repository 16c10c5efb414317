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
/// deliveries go through a serial queue. That is why one slot for "the thread inside a call" is enough. For a
/// queued subscription, handing a change to its queue is not a call: the delivering thread only enqueues (see
/// ``deliver(on:_:)``), and the handshake happens on the queue, around the listener itself. (When the enqueueing
/// took the slot too, it cleared the queue thread's entry, and `cancel()` returned while the listener still ran.)
///
/// The listener itself lives in the owner's table, not here: removing it from the table on cancellation releases it
/// and whatever it captured. Subclasses know their owner and override ``detach()`` to leave it.
// @unchecked because subclasses are generic and non-final; all mutable state here is in atomics, and subclasses
// only add `let` properties or weak references, which are safe to read from any thread.
@usableFromInline class Subscription: @unchecked Sendable {
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

    @usableFromInline
    init(queued: Bool = false) {
        isQueued = queued
    }

    /// Whether ``cancel()`` has been called.
    @inlinable
    final var isCancelled: Bool {
        cancellation.load(ordering: .sequentiallyConsistent) != Self.live
    }

    /// A cheap early check that may still say `true` for a moment after another thread cancelled; ``invoke(on:_:)``
    /// makes the exact one.
    @inlinable
    final var mayBeLive: Bool {
        cancellation.load(ordering: .relaxed) == Self.live
    }

    /// Runs `call` unless the subscription was cancelled; `thread` is ``currentThreadIdentity()`` of the caller.
    @inlinable @inline(__always)
    final func invoke(on thread: UInt, _ call: () -> Void) {
        callingThread.store(thread, ordering: .sequentiallyConsistent)
        if cancellation.load(ordering: .sequentiallyConsistent) == Self.live {
            call()
        }
        callingThread.store(0, ordering: .releasing)
    }

    /// Hands a change to the listener: `call` is the listener itself for a synchronous subscription, guarded by the
    /// handshake; for a queued one, `call` enqueues, and the queue guards the listener with ``invoke(on:_:)``.
    @inlinable @inline(__always)
    final func deliver(on thread: UInt, _ call: () -> Void) {
        if isQueued {
            call()
        } else {
            invoke(on: thread, call)
        }
    }

    /// Stops delivery. Returns once no call is in progress on another thread; idempotent.
    ///
    /// One exception: if the call it would wait for is itself waiting, directly or through other such waits, in a
    /// `cancel()` that waits for this thread's call (two listeners cancelling each other from inside their calls),
    /// it returns without waiting, since neither wait could ever end.
    final func cancel() {
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

    /// Returns once no call of the listener is in progress on another thread (see ``cancel()``).
    ///
    /// The flag is set already, whoever set it: a call that starts now sees it and skips the listener, and a call
    /// that started before it was set published its thread first, which this sees (the handshake in the type's
    /// comment; a cancel that found the flag set read it, sequentially consistent, after the exchange that set it).
    func waitForCallInProgress() {
        if callingThread.load(ordering: .sequentiallyConsistent) == 0 { return }
        let me = currentThreadIdentity()
        var waits = 0
        var registered = false
        defer { if registered { CancelWaits.shared.end(me) } }
        while true {
            let thread = callingThread.load(ordering: .sequentiallyConsistent)
            if thread == 0 || thread == me { return }
            // Listener calls are usually short: yield first, then sleep so a long call does not burn a core. A wait
            // that lasts is published, and given up if it closes a cycle of waits.
            waits += 1
            if waits < 100 {
                yieldThread()
            } else {
                if !registered {
                    registered = true
                    guard CancelWaits.shared.begin(me, waitingFor: self) else { return }
                }
                sleepBriefly()
            }
        }
    }

    /// Stops delivery without waiting for a call in progress on another thread, now or in any later ``cancel()``;
    /// idempotent.
    ///
    /// Only for a listener of the library's own whose call may safely outlive its cancellation: an async stream's,
    /// whose late `yield` the ended stream drops. A stream is cancelled from its task's cancellation handler, which
    /// runs with that task's status lock held, and the call ``cancel()`` would wait for may be a `yield` that is
    /// resuming that very task, so waiting for its lock: neither wait would ever end. A later `cancel()` may run
    /// there too (the handler lets go of the token it captured), so it must not wait either.
    func cancelWithoutWaiting() {
        if cancellation.exchange(Self.cancelledWithoutWaiting, ordering: .sequentiallyConsistent) == Self.live {
            detach()
        }
    }

    /// Removes the subscription's listener from its owner. Called once, by the first ``cancel()`` or
    /// ``cancelWithoutWaiting()``.
    func detach() {}

    /// Called once when the owner is deallocated while the subscription is registered, before it is cancelled.
    func ownerDidEnd() {}
}

/// The threads waiting in ``Subscription/cancel()`` for a call on another thread, and what they wait for: enough to
/// see a cycle of waits (two listeners cancelling each other) when the wait that would close it begins.
final class CancelWaits: Sendable {
    static let shared = CancelWaits()

    private let waiting = Locked<[UInt: Subscription]>([:])

    /// Records that `thread` waits for the call of `subscription`; `false`, recording nothing, if the thread in that
    /// call waits, directly or through others, for `thread`.
    func begin(_ thread: UInt, waitingFor subscription: Subscription) -> Bool {
        waiting.withLock { waiting in
            var next = subscription.callingThread.load(ordering: .sequentiallyConsistent)
            var steps = 0
            while next != 0, steps < waiting.count + 1 {
                if next == thread { return false }
                guard let awaited = waiting[next] else { break }
                next = awaited.callingThread.load(ordering: .sequentiallyConsistent)
                steps += 1
            }
            waiting[thread] = subscription
            return true
        }
    }

    func end(_ thread: UInt) {
        _ = waiting.withLock { $0.removeValue(forKey: thread) }
    }

    /// Whether `thread` is waiting in a `cancel()` for a call that lasts: how a test knows a cancellation blocks.
    func isWaiting(_ thread: UInt) -> Bool {
        waiting.withLock { $0[thread] != nil }
    }
}
