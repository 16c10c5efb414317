import Synchronization

/// A ``TurnQueue`` whose idle case takes no lock: how a ``Store`` orders its work.
///
/// Most dispatches find the store idle and leave it idle. For them, taking the queue's lock twice (to become the
/// worker, then to find nothing queued) cost two lock round trips, a third of an idle `dispatch`. Here an atomic
/// word, ``activity``, says who works: the caller claims an idle store with one compare-and-exchange
/// (``claimIfIdle()``) and gives it back with another (``finishIfNothingQueued()``). Work queued meanwhile is the
/// queue's, under its lock: queueing marks the word, so the worker's give-back fails and it goes on through
/// ``next()``, which takes the lock.
///
/// The rules that keep the two halves in agreement:
/// - The word is 0 only when nobody works, and then nothing is queued and the queue is idle.
/// - The queued mark is set, under the lock, before anything is queued, and only ``next()`` clears it (setting the
///   word to 0, under the lock, when the queue is empty): a worker whose give-back succeeded saw no mark, so
///   nothing was queued.
/// - The queue learns of a worker that claimed without the lock (``TurnQueue/adoptClaimer(_:)``) when the first
///   work is queued behind it, so its order and chains are the queue's own.
/// - Above the mark, the word holds the worker's thread (0 while a handed turn has not started): what
///   ``WaitGraph`` reads of a store other than the caller's, without its lock.
@usableFromInline
struct Inbox<Work: Sendable>: ~Copyable, Sendable {
    /// How a caller that finds the store busy waits for its work.
    @usableFromInline
    enum Waiting {
        /// It does not: an effect's action, an outside change.
        case never
        /// It blocks its thread; `store` is the store it waits for, as ``WaitGraph`` sees it.
        case blocking(any TurnTaking)
        /// It does not, unless ``backlog`` items are queued already: then it blocks as ``blocking(_:)`` does. For
        /// work the caller need not wait for but must not queue without bound (a subscription's registration).
        case blockingWhenBacklogged(any TurnTaking)
        /// It suspends its task.
        case suspending
    }

    /// What a caller does with work it submitted.
    @usableFromInline
    enum Submission {
        /// The store was idle: the caller is its worker, and does the work now.
        case performNow(Work)
        /// Queued; nobody waits for it (it came from inside the store's work, or did not ask to).
        case queued
        /// Queued; the caller waits with this record.
        case wait(WaitingCaller)
    }

    @usableFromInline let activity = Atomic<UInt>(0)
    @usableFromInline let turns: Locked<TurnQueue<Work>>

    @usableFromInline static var queuedMark: UInt { 1 }

    /// How many queued items make a ``Waiting/blockingWhenBacklogged(_:)`` caller wait.
    static var backlog: Int { 64 }

    @inlinable
    init(shareForOthers: Int) {
        turns = Locked(TurnQueue(shareForOthers: shareForOthers))
    }

    @inlinable @inline(__always)
    static func working(_ thread: UInt) -> UInt { thread &<< 1 }

    /// Whether nothing is queued and no thread is working.
    var isIdle: Bool {
        activity.load(ordering: .acquiring) == 0
    }

    /// The worker's thread; 0 if nobody works or a handed turn has not started.
    var workerThread: UInt {
        activity.load(ordering: .acquiring) &>> 1
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

    /// Waits a little for a busy store to become idle, then claims it as ``claimIfIdle()`` does: under light
    /// contention, the way a lock is taken, with no queueing, no waiting record and no wake-up. A store whose worker
    /// leaves with work queued is never idle (it hands the turn on), so this never overtakes a queued caller; and it
    /// gives up at once on the caller's own store (a dispatch from inside its work) and after a few tries otherwise,
    /// to queue and take its turn.
    /// - Returns: Whether the caller is now the worker.
    @usableFromInline
    func claimSoon() -> Bool {
        let me = currentThreadIdentity()
        for _ in 0..<Self.claimTries {
            let current = activity.load(ordering: .relaxed)
            if current == 0 {
                if claimIfIdle(as: me) { return true }
                continue
            }
            if current &>> 1 == me { return false }
            yieldThread()
        }
        return false
    }

    /// How many times ``claimSoon()`` looks before it gives up.
    static var claimTries: Int { 16 }

    /// Gives the store back if nothing was queued since the caller, the worker, claimed it.
    /// - Returns: `false` if work is queued: the worker goes on with ``next()``.
    @inlinable @inline(__always)
    func finishIfNothingQueued() -> Bool {
        activity.compareExchange(
            expected: Self.working(currentThreadIdentity()), desired: 0, ordering: .acquiringAndReleasing
        ).exchanged
    }

    /// Hands `work()` back to the caller to do now if nobody works (the caller becomes the worker), or queues it.
    @usableFromInline
    func submit(_ work: () -> Work, waiting: Waiting) -> Submission {
        turns.withLock { turns in
            let me = currentThreadIdentity()
            while true {
                let current = activity.load(ordering: .acquiring)
                if current == 0 {
                    // Nothing is queued when nobody works: the queue is already in its idle state.
                    guard claimIfIdle(as: me) else { continue }
                    return .performNow(work())
                }
                if current & Self.queuedMark == 0 {
                    // The worker claimed without the lock: mark the word first, so that its give-back fails and it
                    // comes for what is queued here.
                    guard activity.compareExchange(
                        expected: current, desired: current | Self.queuedMark, ordering: .acquiringAndReleasing
                    ).exchanged else { continue }
                    turns.adoptClaimer(current &>> 1)
                }
                let caller = Self.caller(waiting: waiting, thread: me, worker: turns.worker, queued: turns.queue.count)
                guard turns.submit(work(), from: me, caller: caller), let caller else { return .queued }
                return .wait(caller)
            }
        }
    }

    /// A record for a caller from another thread than the worker's that waits, unless its wait would close a cycle.
    private static func caller(waiting: Waiting, thread: UInt, worker: UInt, queued: Int) -> WaitingCaller? {
        switch waiting {
        case .never:
            return nil
        case .suspending:
            return WaitingCaller(blocking: nil)
        case .blockingWhenBacklogged(let store):
            guard queued >= backlog else { return nil }
            return caller(waiting: .blocking(store), thread: thread, worker: worker, queued: queued)
        case .blocking(let store):
            guard thread != worker,
                WaitGraph.register(thread, waitingFor: store, firstWorker: worker)
            else { return nil }
            return WaitingCaller(blocking: thread)
        }
    }

    /// Blocks until `caller`'s chain is done (returns `nil`) or it is the caller's turn (returns what it does
    /// first).
    @usableFromInline
    func wait(_ caller: WaitingCaller) -> TurnQueue<Work>.Next? {
        caller.wait() == .done ? nil : startTurn()
    }

    /// What the worker does next, once ``finishIfNothingQueued()`` failed; ``TurnQueue/Next/finished`` leaves the
    /// store idle. Ends the wait of a caller whose chain the last item ended, and of one handed the turn.
    @usableFromInline
    func next() -> TurnQueue<Work>.Next {
        let (next, done) = turns.withLock { turns in
            let (next, done) = turns.next()
            // Before the word can say the store is idle: a thread claiming it then must not find the old edge.
            done?.leaveWaitGraph()
            record(next)
            return (next, done)
        }
        done?.end(with: .done)
        if case .handTurn(let caller) = next { caller.end(with: .yourTurn) }
        return next
    }

    /// Starts the turn of a caller whose wait ended with ``WaitingCaller/Outcome/yourTurn``, or of a background
    /// thread after a hand-off, on the calling thread; returns what it does first.
    @usableFromInline
    func startTurn() -> TurnQueue<Work>.Next {
        let thread = currentThreadIdentity()
        let next = turns.withLock { turns in
            activity.store(Self.working(thread) | Self.queuedMark, ordering: .releasing)
            let next = turns.startTurn(on: thread)
            record(next)
            return next
        }
        if case .handTurn(let caller) = next { caller.end(with: .yourTurn) }
        return next
    }

    /// Keeps the word, and the wait graph, in step with the queue after `next` (under the lock).
    private func record(_ next: TurnQueue<Work>.Next) {
        switch next {
        case .finished:
            activity.store(0, ordering: .releasing)
        case .handTurn(let caller):
            caller.leaveWaitGraph()
            activity.store(Self.queuedMark, ordering: .releasing)
        case .handOff:
            activity.store(Self.queuedMark, ordering: .releasing)
        case .perform:
            break
        }
    }
}

/// A store, as ``WaitGraph`` sees it: its worker's thread.
@usableFromInline
protocol TurnTaking: AnyObject, Sendable {
    /// The thread doing the store's work now; 0 if none, or a handed turn has not started.
    var workerThread: UInt { get }
}
