/// The state of a replicated store's inner `Store`: the user's state and the sequence number of the last action
/// applied to it, changed together, under one lock.
struct ReplicaState<State: Sendable>: Sendable {
    var state: State
    /// 0 before the first action.
    var sequence: Int64
}

/// Resumed with an action's sequence number once this process applied it, or with why it was never appended.
typealias AppliedWaiter = CheckedContinuation<Int64, any Error>

/// What a replicated store's inner `Store` does.
enum ReplicaAction<State: Sendable, Action: Sendable>: Sendable {
    /// An action dispatched here (by the user or an effect): to be appended to the log, not applied. The store's
    /// middleware takes it to the append queue, in the order of the store's other work.
    case submit(Action, AppliedWaiter?)
    /// A snapshot: the state after `sequence`, taken before any action is applied.
    case restore(State, sequence: Int64)
    /// The log's action number `sequence`: applied to the state. `local` is its number among this store's own
    /// actions when this store appended it (its effects then run), `nil` when another did.
    case apply(Action, sequence: Int64, local: Int64?)
}
