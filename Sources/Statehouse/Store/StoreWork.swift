/// What a ``Store`` does, one item at a time, in order (see ``WorkQueue``).
///
/// A store does one thing at a time: one thread at a time (the *processor*) takes work from its queue. A dispatch or
/// a subscription made while another thread — or the processor itself, from a reducer, middleware or subscriber — is
/// processing is only queued. This is what applies actions first in first out, shows every subscriber every state
/// in order, and gives a new subscriber its first value before any later one.
@usableFromInline
enum StoreWork<State: Sendable, Action: Sendable>: Sendable {
    /// An action; `origin` is the effect that sent it, if any, whose cancellation drops it.
    case action(Action, origin: EffectHandle?)
    /// Runs on the processor, in order with the rest: registering a subscriber (and showing it the current
    /// selection), a scoped store's work.
    case run(@Sendable () -> Void)
    /// Replaces the state (time travel, replay) and writes it to the storage.
    case replaceState(State)
    /// Takes a state read from the storage, if the store has not changed since its change count was `count`;
    /// calls `refused` otherwise.
    case takeStoredState(State, ifUnchangedSince: UInt64, refused: @Sendable () -> Void)

    /// How many items queued by other threads one caller processes before a background thread takes over.
    @usableFromInline static var shareForOthers: Int { 16 }
}
