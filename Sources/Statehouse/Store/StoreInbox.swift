/// The work waiting for a store, and whether a thread is doing it.
///
/// A store does one thing at a time, in order: one thread at a time (the *processor*) takes work from here until
/// none is left. A dispatch or a subscription made while another thread — or the processor itself, from a reducer,
/// middleware or subscriber — is processing is only queued. This is what applies actions first in first out,
/// shows every subscriber every state in order, and gives a new subscriber its first value before any later one.
@usableFromInline
struct StoreInbox<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    enum Work: Sendable {
        case action(Action)
        /// Registers a subscriber and shows it the current selection.
        case subscribe(@Sendable () -> Void)
        /// Replaces the state (a scoped store following its parent, time travel, a persisted store following its
        /// storage); `writeBack` is `false` for a state that came from the storage.
        case replaceState(State, writeBack: Bool)
    }

    @usableFromInline var queue = FIFOQueue<Work>()
    @usableFromInline var isProcessing = false

    @inlinable
    init() {}

    /// Hands `work` back to the caller to do now if nobody is processing (the caller becomes the processor),
    /// or queues it and returns `nil`. An idle store so queues nothing.
    @inlinable
    mutating func submit(_ work: Work) -> Work? {
        if isProcessing {
            queue.append(work)
            return nil
        }
        isProcessing = true
        return work
    }

    /// The next work for the processor, or `nil` when it is done and may leave.
    @inlinable
    mutating func next() -> Work? {
        guard let work = queue.popFirst() else {
            isProcessing = false
            return nil
        }
        return work
    }
}
