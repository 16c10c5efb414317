import Synchronization

/// The calling side of the handshake that guarantees "after `cancel()` returns, no further call starts" (see
/// ``SubscriptionToken``), and the waiting side of `cancel()`.
extension SubscriptionToken {
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

    /// Returns once no call of this token's listener is in progress on another thread (see ``cancel()``).
    ///
    /// The flag is set already, whoever set it: a call that starts now sees it and skips the listener, and a call
    /// that started before it was set published its thread first, which this sees (the handshake in the type's
    /// comment; a cancel that found the flag set read it, sequentially consistent, after the exchange that set it).
    final func waitForListenerCall() {
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
}
