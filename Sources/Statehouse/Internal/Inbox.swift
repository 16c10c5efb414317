import Synchronization

/// A ``WorkQueue`` whose idle case takes no lock: how a ``Store`` orders its work.
///
/// Most dispatches find the store idle and leave it idle. For them, taking the queue's lock twice (to become the
/// worker, then to find nothing queued) cost two lock round trips, a third of an idle `dispatch`. Here an atomic
/// word, ``activity``, says who works: the caller claims an idle store with one compare-and-exchange
/// (``claimIfIdle()``) and gives it back with another (``finishIfNothingQueued()``). Work queued meanwhile is the
/// queue's, under its lock, as before: queueing marks the word, so the worker's give-back fails and it goes on
/// through ``next()``, which takes the lock.
///
/// The rules that keep the two halves in agreement:
/// - The word is 0 only when nobody works, and then nothing is queued and the queue's counters are reset.
/// - The queued mark is set, under the lock, before anything is queued, and only ``next()`` clears it (setting the
///   word to 0, under the lock, when the queue is empty): a worker whose give-back succeeded saw no mark, so
///   nothing was queued.
/// - The queue learns of a worker that claimed without the lock (``WorkQueue/adoptWorker(_:)``) when the first
///   work is queued behind it, so its order and shares are the queue's own (see ``WorkQueue``).
@usableFromInline
struct Inbox<Work: Sendable>: ~Copyable, Sendable {
    /// 0 while nobody works; otherwise the worker's thread identity shifted left by one, and ``queuedMark`` once
    /// work is queued behind it. User-space thread identities (addresses) leave the top bit free for the shift.
    @usableFromInline let activity = Atomic<UInt>(0)
    @usableFromInline let waiting: Locked<WorkQueue<Work>>

    @usableFromInline static var queuedMark: UInt { 1 }

    @inlinable
    init(shareForOthers: Int) {
        waiting = Locked(WorkQueue(shareForOthers: shareForOthers))
    }

    @inlinable @inline(__always)
    static func working(_ thread: UInt) -> UInt { thread &<< 1 }

    /// Whether nothing is queued and no thread is working.
    var isIdle: Bool {
        activity.load(ordering: .acquiring) == 0
    }

    /// Makes the caller the worker if nobody works: one atomic operation, no lock.
    /// - Returns: Whether the caller is now the worker, and must do its work, then ``finishIfNothingQueued()``.
    @inlinable @inline(__always)
    func claimIfIdle() -> Bool {
        claimIfIdle(as: currentThreadIdentity())
    }

    @inlinable @inline(__always)
    func claimIfIdle(as thread: UInt) -> Bool {
        activity.compareExchange(expected: 0, desired: Self.working(thread), ordering: .acquiringAndReleasing).exchanged
    }

    /// Gives the store back if nothing was queued since the caller, the worker, claimed it.
    /// - Returns: `false` if work is queued (or a background thread took over): the worker goes on with ``next()``.
    @inlinable @inline(__always)
    func finishIfNothingQueued() -> Bool {
        activity.compareExchange(
            expected: Self.working(currentThreadIdentity()), desired: 0, ordering: .acquiringAndReleasing
        ).exchanged
    }

    /// Hands `work()` back to the caller to do now if nobody works (the caller becomes the worker), or queues it
    /// and returns `nil`.
    @inlinable
    func submit(_ work: () -> Work) -> Work? {
        waiting.withLock { queue in
            let me = currentThreadIdentity()
            while true {
                let current = activity.load(ordering: .acquiring)
                if current == 0 {
                    // Nothing is queued when nobody works: the queue is already in its idle state.
                    guard claimIfIdle(as: me) else { continue }
                    return work()
                }
                if current & Self.queuedMark == 0 {
                    // The worker claimed without the lock: mark the word first, so that its give-back fails and it
                    // comes for what is queued here.
                    guard activity.compareExchange(
                        expected: current, desired: current | Self.queuedMark, ordering: .acquiringAndReleasing
                    ).exchanged else { continue }
                    queue.adoptWorker(current &>> 1)
                }
                let taken = queue.submit(work())
                precondition(taken == nil, "the inbox queued work while its queue had no worker")
                return nil
            }
        }
    }

    /// What the worker does next, once ``finishIfNothingQueued()`` failed; ``WorkQueue/Next/finished`` leaves the
    /// store idle.
    @inlinable @inline(__always)
    func next() -> WorkQueue<Work>.Next {
        waiting.withLock { queue in
            let next = queue.next()
            if case .finished = next { activity.store(0, ordering: .releasing) }
            return next
        }
    }

    /// Makes `thread`, a background thread, the worker after a hand-off; returns what it does first.
    func resume(on thread: UInt) -> WorkQueue<Work>.Next {
        waiting.withLock { queue in
            activity.store(Self.working(thread) | Self.queuedMark, ordering: .releasing)
            let next = queue.resume(on: thread)
            if case .finished = next { activity.store(0, ordering: .releasing) }
            return next
        }
    }
}
