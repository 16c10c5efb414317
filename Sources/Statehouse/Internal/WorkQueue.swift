/// Work done by one thread at a time, in order, with a bounded share for each caller: how containers deliver changes
/// (a store's work, whose callers wait for it, is a ``TurnQueue``). The logic without the locking; its owner calls it
/// under its lock.
///
/// - **One worker.** The first thread to submit work while nobody works becomes the *worker* and does it at once;
///   work submitted meanwhile — by other threads, or by the worker itself from inside the work (re-entrancy) — is
///   queued and done next, first in first out.
/// - **A bounded share.** The worker does its own work and what it queues itself, but at most `shareForOthers` items
///   queued by other threads; then ``next()`` says ``Next/handOff``: the caller must let a background thread take
///   over (``resume(on:)``) and return, so that no caller is held for other threads' work without bound. A
///   background worker is nobody's caller: it has no share to keep to.
/// - **Coalescing.** `submit` may merge a new item into the one queued last (a container's newest change supersedes
///   the one queued before it), so that the queue does not grow with work that nobody will need.
@usableFromInline
struct WorkQueue<Work: Sendable>: Sendable {
    @usableFromInline
    struct Queued: Sendable {
        @usableFromInline var work: Work
        /// Whether a thread other than the worker queued it (or, once merged, any part of it).
        @usableFromInline var fromOtherThread: Bool

        @inlinable
        init(work: Work, fromOtherThread: Bool) {
            self.work = work
            self.fromOtherThread = fromOtherThread
        }
    }

    /// What the worker does next.
    @usableFromInline
    enum Next: Sendable {
        case perform(Work)
        /// Nothing is left: the worker may leave.
        case finished
        /// The worker did its share; a background thread must take over what is left.
        case handOff
    }

    @usableFromInline let shareForOthers: Int
    @usableFromInline var queue = FIFOQueue<Queued>()
    @usableFromInline var isWorking = false
    @usableFromInline var worker: UInt = 0
    @usableFromInline var doneForOthers = 0
    @usableFromInline var inBackground = false

    /// - Parameter shareForOthers: How many items queued by other threads one caller does before handing off.
    @inlinable
    init(shareForOthers: Int) {
        self.shareForOthers = shareForOthers
    }

    /// Hands `work` back to the caller to do now if nobody is working (the caller becomes the worker), or queues it
    /// and returns `nil`. `merge` may combine it with the item queued last: it returns the merged item, or `nil` to
    /// queue the two apart.
    @inlinable @inline(__always)
    mutating func submit(
        _ work: consuming Work,
        mergingWithLast merge: (_ last: Work, _ new: Work) -> Work? = { _, _ in nil }
    ) -> Work? {
        guard isWorking else {
            becomeWorker()
            return work
        }
        let fromOtherThread = currentThreadIdentity() != worker
        if let last = queue.last, let merged = merge(last.work, work) {
            queue.replaceLast(with: Queued(work: merged, fromOtherThread: fromOtherThread || last.fromOtherThread))
        } else {
            queue.append(Queued(work: work, fromOtherThread: fromOtherThread))
        }
        return nil
    }

    /// `thread` starts working, with its whole share for other threads' items ahead of it.
    @inlinable @inline(__always)
    mutating func becomeWorker(_ thread: UInt = currentThreadIdentity()) {
        isWorking = true
        worker = thread
        doneForOthers = 0
        inBackground = false
    }

    /// Makes `thread` the worker of an idle queue: it started working without the queue (see ``Inbox``), which
    /// learns of it when work is first queued behind it.
    @inlinable
    mutating func adoptWorker(_ thread: UInt) {
        precondition(!isWorking && queue.isEmpty, "a worker adopted by a queue that already has one")
        becomeWorker(thread)
    }

    /// What the worker does after an item.
    @inlinable @inline(__always)
    mutating func next() -> Next {
        guard let first = queue.first else {
            isWorking = false
            return .finished
        }
        if first.fromOtherThread {
            guard inBackground || doneForOthers < shareForOthers else { return .handOff }
            doneForOthers += 1
        }
        _ = queue.popFirst()
        return .perform(first.work)
    }

    /// Makes `thread`, a background thread, the worker after a hand-off; returns what it does first.
    mutating func resume(on thread: UInt) -> Next {
        worker = thread
        inBackground = true
        return next()
    }
}
