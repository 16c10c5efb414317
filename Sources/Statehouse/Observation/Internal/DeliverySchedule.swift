/// Who delivers a container's changes, and what waits for them: the rules that keep every listener's calls in
/// order, free of re-entrant duplicates, ending with the last value, with bounded memory and a bounded wait for
/// every caller. The logic without the locking: the container calls it under its lock.
///
/// - **One deliverer.** The first thread to change an idle container delivers (it becomes the *deliverer*); a change
///   made meanwhile, by another thread or by a listener on the deliverer's thread, is only queued.
/// - **Coalescing.** A change queued right behind another queued change replaces it: the deliverer hands listeners
///   the latest value, so a burst of changes made while a listener runs costs one call, and the queue never holds
///   more than one change between two initial values (a new listener's first call keeps its place).
/// - **Bounded work per caller.** The deliverer delivers its own rounds and those its listeners queue on its thread,
///   but at most ``roundsForOthersPerCaller`` rounds queued by other threads; then it hands what is left to a
///   background thread (``Next/handOff``) and returns, so that no `modify` is held for other threads' work without
///   bound.
@usableFromInline
struct DeliverySchedule<Value: Sendable>: Sendable {
    /// How many rounds queued by other threads one caller delivers before handing the rest off.
    @usableFromInline static var roundsForOthersPerCaller: Int { 8 }

    @usableFromInline
    struct Pending: Sendable {
        @usableFromInline var round: DeliveryRound<Value>
        /// Whether a thread other than the deliverer queued it (or, once coalesced, any part of it).
        @usableFromInline var fromOtherThread: Bool

        @inlinable
        init(round: DeliveryRound<Value>, fromOtherThread: Bool) {
            self.round = round
            self.fromOtherThread = fromOtherThread
        }
    }

    /// What the deliverer does next.
    @usableFromInline
    enum Next: Sendable {
        case deliver(DeliveryRound<Value>)
        /// Nothing is left: the deliverer may leave.
        case finished
        /// The deliverer did its share; a background thread must take over what is left.
        case handOff
    }

    @usableFromInline var pending = FIFOQueue<Pending>()
    @usableFromInline var isDelivering = false
    @usableFromInline var deliverer: UInt = 0
    @usableFromInline var roundsForOthers = 0
    /// Whether the current deliverer took over after a hand-off: it has no share to keep to.
    @usableFromInline var inBackground = false

    @inlinable
    init() {}

    /// Hands `round` to the caller to deliver now if nobody is delivering (the caller becomes the deliverer), or
    /// queues it and returns `nil`.
    @inlinable
    mutating func startOrQueue(_ round: DeliveryRound<Value>) -> DeliveryRound<Value>? {
        let thread = currentThreadIdentity()
        guard isDelivering else {
            isDelivering = true
            deliverer = thread
            roundsForOthers = 0
            inBackground = false
            return round
        }
        let queued = Pending(round: round, fromOtherThread: thread != deliverer)
        if round.isChange, let last = pending.last, last.round.isChange {
            pending.replaceLast(with: Pending(
                round: round, fromOtherThread: queued.fromOtherThread || last.fromOtherThread
            ))
        } else {
            pending.append(queued)
        }
        return nil
    }

    /// What the deliverer does after a round.
    @inlinable
    mutating func next() -> Next {
        guard let first = pending.first else {
            isDelivering = false
            return .finished
        }
        if first.fromOtherThread {
            guard inBackground || roundsForOthers < Self.roundsForOthersPerCaller else { return .handOff }
            roundsForOthers += 1
        }
        _ = pending.popFirst()
        return .deliver(first.round)
    }

    /// Makes `thread` the deliverer after a hand-off; returns what it delivers first. A background deliverer is
    /// nobody's caller: it delivers everything, however much other threads queue.
    mutating func resume(on thread: UInt) -> Next {
        deliverer = thread
        roundsForOthers = 0
        inBackground = true
        return next()
    }
}
