/// What a ``Store`` does, one item at a time, in order (see ``WorkQueue``).
///
/// A store does one thing at a time: one thread at a time (the *worker*) takes work from its queue (see
/// ``TurnQueue``). A dispatch or a subscription made while the store is busy is queued; from another thread, the
/// caller waits for it to be done, or for its turn to do it. This is what applies actions first in first out, shows every subscriber every state
/// in order, and gives a new subscriber its first value before any later one.
@usableFromInline
enum StoreWork<State: Sendable, Action: Sendable>: Sendable {
    /// An action dispatched or sent (`dispatch`, `send`) while the store was busy.
    case action(Action)
    /// An action an effect sent back; `origin` is the cancellable effect it came from, if any, whose cancellation
    /// drops it. A recording notes that an effect sent it.
    case effectAction(Action, origin: EffectHandle?)
    /// An action a named middleware dispatched; the recording and the store's taps note which.
    case middlewareAction(Action, source: ActionSource)
    /// Runs on the processor, in order with the rest: registering a subscriber (and showing it the current
    /// selection), a scoped store's work.
    case run(@Sendable () -> Void)
    /// Replaces the state (time travel, replay) and writes it to the storage.
    case replaceState(State)
    /// Takes a state read from the storage, if the store has not changed since its change count was `count`;
    /// calls `refused` otherwise.
    case takeStoredState(State, ifUnchangedSince: UInt64, refused: @Sendable () -> Void)

    /// How many items of others a caller does once its own are done, before it hands the turn on.
    @usableFromInline static var shareForOthers: Int { 16 }
}
