/// A store's work, done by one thread at a time, in order, by the callers who bring it: the logic without the
/// locking (``Inbox`` calls it under its lock).
///
/// - **One worker.** The caller that finds the store idle becomes the *worker* and does its work at once. Work
///   submitted meanwhile is queued and done first in first out.
/// - **Chains.** Each queued item belongs to a *chain*: the worker's own work, a waiting caller's, or nobody's
///   (*detached*: an effect's action, an outside change). What the work of an item queues from the worker's thread
///   (a nested dispatch, a `.send` effect, a subscription made by a subscriber) joins that item's chain.
/// - **Callers wait for their chain.** A caller from another thread queues its item and waits (``WaitingCaller``)
///   until its chain is done — its action and everything applying it queued — so that it reads its own write.
///   Work queued after its item but before its chain's later items is done first, as the order requires; work
///   queued after its chain is not its to wait for.
/// - **Turns.** The worker leaves once its own chain is done and it has helped with at most `shareForOthers` more
///   items; then it hands the turn to the caller waiting longest, who does the work ahead of its own chain and its
///   chain, and so on. No caller does other threads' work without bound, and nothing is left behind when the
///   callers have returned. Only when no blocked caller waits and work is left (detached work, or the work of
///   suspended tasks, which are never handed the turn: see ``WaitingCaller``) does a background thread take over
///   (``Next/handOff``); it hands the turn to the first blocked caller that comes.
///
/// The number of queued items is bounded by the number of waiting callers (and what their work queues), whatever
/// the rate they call at: a caller's next call waits for this one.
@usableFromInline
struct TurnQueue<Work: Sendable>: Sendable {
    /// Whose work an item is.
    @usableFromInline
    enum Chain: Sendable {
        /// The worker that claimed the idle store: its items are counted in `claimerOutstanding`.
        case claimer
        case caller(WaitingCaller)
        case detached
    }

    @usableFromInline
    struct Queued: Sendable {
        var work: Work
        var chain: Chain

        init(work: Work, chain: Chain) {
            self.work = work
            self.chain = chain
        }
    }

    /// What the worker does next.
    @usableFromInline
    enum Next: Sendable {
        case perform(Work)
        /// Nothing is left: the store is idle.
        case finished
        /// The worker is done; the caller is the worker now (its wait must end with ``WaitingCaller/Outcome/yourTurn``).
        case handTurn(to: WaitingCaller)
        /// The worker is done and nobody waits: a background thread must take over (``startTurn(on:)``).
        case handOff
    }

    let shareForOthers: Int
    var queue = FIFOQueue<Queued>()
    /// Blocked callers, who may be handed the turn, longest waiting first; those whose wait ended already are skipped.
    var waitingCallers = FIFOQueue<WaitingCaller>()
    var isWorking = false
    /// The worker's thread; 0 while a turn handed to a caller or a background thread has not started.
    var worker: UInt = 0
    /// The worker's own chain, which it stays for.
    var own = Chain.detached
    /// The chain of the item being done; what the worker queues joins it.
    var current = Chain.detached
    var claimerOutstanding = 0
    /// Items the worker did since its own chain was done.
    var helped = 0
    var inBackground = false

    /// - Parameter shareForOthers: How many items a caller does for others once its own chain is done.
    @usableFromInline
    init(shareForOthers: Int) {
        self.shareForOthers = shareForOthers
    }

    /// Makes `thread` the worker of an idle queue: it claimed the store without the queue (see ``Inbox``), which
    /// learns of it when work is first queued behind it, in the middle of its first item.
    mutating func adoptClaimer(_ thread: UInt) {
        precondition(!isWorking && queue.isEmpty, "a worker adopted by a queue that already has one")
        isWorking = true
        worker = thread
        own = .claimer
        current = .claimer
        claimerOutstanding = 1
        helped = 0
        inBackground = false
    }

    /// Queues `work`, from `thread`, behind the worker's.
    /// - Parameter caller: The record of a caller from another thread that will wait for its chain; `nil` for
    ///   work nobody waits for.
    /// - Returns: Whether `caller` must wait: `false` if the work came from the worker's thread (from inside the
    ///   store's work: it joins the chain being done, and nobody waits for it) or had no caller.
    mutating func submit(_ work: consuming Work, from thread: UInt, caller: WaitingCaller?) -> Bool {
        precondition(isWorking, "work queued while nobody works")
        if thread == worker {
            join(current)
            queue.append(Queued(work: work, chain: current))
            return false
        }
        guard let caller else {
            queue.append(Queued(work: work, chain: .detached))
            return false
        }
        queue.append(Queued(work: work, chain: .caller(caller)))
        if caller.isBlocking { waitingCallers.append(caller) }
        return true
    }

    mutating func join(_ chain: Chain) {
        switch chain {
        case .claimer: claimerOutstanding += 1
        case .caller(let caller): caller.addItem()
        case .detached: break
        }
    }

    /// What the worker does after an item.
    /// - Returns: What to do next, and a caller whose chain that item ended, whose wait must end with
    ///   ``WaitingCaller/Outcome/done``.
    mutating func next() -> (next: Next, done: WaitingCaller?) {
        var done: WaitingCaller?
        switch current {
        case .claimer:
            claimerOutstanding -= 1
        case .caller(let caller):
            if caller.itemDone(), !isOwn(caller) { done = caller }
        case .detached:
            break
        }
        current = .detached
        return (following(), done)
    }

    /// Starts the turn handed to a caller (``Next/handTurn(to:)``) or to a background thread (``Next/handOff``), on
    /// its `thread`; returns what it does first.
    mutating func startTurn(on thread: UInt) -> Next {
        worker = thread
        return following()
    }

    func isOwn(_ caller: WaitingCaller) -> Bool {
        guard case .caller(let own) = own else { return false }
        return own === caller
    }

    var ownChainIsDone: Bool {
        switch own {
        case .claimer: claimerOutstanding == 0
        case .caller(let caller): caller.itemsOutstanding == 0
        case .detached: true
        }
    }

    /// The worker's next step, between items.
    mutating func following() -> Next {
        guard let first = queue.first else {
            precondition(ownChainIsDone, "a chain with work outstanding and nothing queued")
            isWorking = false
            worker = 0
            own = .detached
            waitingCallers = FIFOQueue()
            return .finished
        }
        if ownChainIsDone {
            if inBackground || helped >= shareForOthers {
                if let caller = longestWaitingCaller() { return handTurn(to: caller) }
                if !inBackground { return handOff() }
            } else {
                helped += 1
            }
        }
        _ = queue.popFirst()
        current = first.chain
        return .perform(first.work)
    }

    /// The caller waiting longest whose chain is not done.
    mutating func longestWaitingCaller() -> WaitingCaller? {
        while let caller = waitingCallers.popFirst() {
            if caller.itemsOutstanding > 0 { return caller }
        }
        return nil
    }

    mutating func handTurn(to caller: WaitingCaller) -> Next {
        worker = 0
        own = .caller(caller)
        helped = 0
        inBackground = false
        return .handTurn(to: caller)
    }

    mutating func handOff() -> Next {
        worker = 0
        own = .detached
        helped = 0
        inBackground = true
        return .handOff
    }
}
