/// The work waiting for a store, and whether a thread is doing it.
///
/// A store does one thing at a time, in order: one thread at a time (the *processor*) takes work from here. A
/// dispatch or a subscription made while another thread — or the processor itself, from a reducer, middleware or
/// subscriber — is processing is only queued. This is what applies actions first in first out, shows every
/// subscriber every state in order, and gives a new subscriber its first value before any later one.
///
/// The processor does its own work and the work it queues itself (nested dispatches, `.send` effects), but at most
/// ``workForOthersPerCaller`` items queued by other threads; then it hands what is left to a background thread
/// (``Next/handOff``) and returns, so that no `dispatch` is held for other threads' work without bound.
@usableFromInline
struct StoreInbox<State: Sendable, Action: Sendable>: Sendable {
    /// How many items queued by other threads one caller processes before handing the rest off.
    @usableFromInline static var workForOthersPerCaller: Int { 16 }

    @usableFromInline
    enum Work: Sendable {
        /// An action; `origin` is the effect that sent it, if any, whose cancellation drops it.
        case action(Action, origin: EffectHandle?)
        /// Runs on the processor, in order with the rest: registering a subscriber (and showing it the current
        /// selection), a scoped store's work, starting a recording.
        case run(@Sendable () -> Void)
        /// Replaces the state (time travel, replay) and writes it to the storage.
        case replaceState(State)
        /// Takes a state read from the storage, if the store has not changed since its change count was `count`.
        case takeStoredState(State, ifUnchangedSince: UInt64)
    }

    /// What the processor does next.
    @usableFromInline
    enum Next: Sendable {
        case perform(Work)
        /// Nothing is left: the processor may leave.
        case finished
        /// The processor did its share; a background thread must take over what is left.
        case handOff
    }

    @usableFromInline
    struct Queued: Sendable {
        @usableFromInline let work: Work
        @usableFromInline let fromOtherThread: Bool

        @inlinable
        init(work: Work, fromOtherThread: Bool) {
            self.work = work
            self.fromOtherThread = fromOtherThread
        }
    }

    @usableFromInline var queue = FIFOQueue<Queued>()
    @usableFromInline var isProcessing = false
    @usableFromInline var processor: UInt = 0
    @usableFromInline var workForOthers = 0
    /// Whether the current processor took over after a hand-off: it has no share to keep to.
    @usableFromInline var inBackground = false

    @inlinable
    init() {}

    /// Hands `work` back to the caller to do now if nobody is processing (the caller becomes the processor),
    /// or queues it and returns `nil`. An idle store so queues nothing.
    @inlinable
    mutating func submit(_ work: Work) -> Work? {
        let thread = currentThreadIdentity()
        if isProcessing {
            queue.append(Queued(work: work, fromOtherThread: thread != processor))
            return nil
        }
        isProcessing = true
        processor = thread
        workForOthers = 0
        inBackground = false
        return work
    }

    /// What the processor does next.
    @inlinable
    mutating func next() -> Next {
        guard let first = queue.first else {
            isProcessing = false
            return .finished
        }
        if first.fromOtherThread {
            guard inBackground || workForOthers < Self.workForOthersPerCaller else { return .handOff }
            workForOthers += 1
        }
        _ = queue.popFirst()
        return .perform(first.work)
    }

    /// Makes `thread` the processor after a hand-off; returns what it does first. A background processor is
    /// nobody's caller: it does everything, however much other threads queue.
    mutating func resume(on thread: UInt) -> Next {
        processor = thread
        workForOthers = 0
        inBackground = true
        return next()
    }
}
