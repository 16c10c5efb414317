/// A store's ``UndoHistory``, behind a lock of its own so that any thread can ask what undo would do.
///
/// The history changes only in the store's work, under the store's state lock (which is always taken first): as
/// the reducer applies an action, and as undo and redo replace the state. So what subscribers select and what
/// Observation reports agree with the state they see.
@usableFromInline
final class UndoLog<State: Sendable, Action: Sendable>: Sendable {
    private let history = Locked(UndoHistory<State, Action>())
    private let policy: UndoPolicy<Action>
    private let readsClock: Bool

    init(policy: UndoPolicy<Action>) {
        self.policy = policy
        readsClock = policy.grouping != .eachAction
    }

    var footprint: (groups: Int, actions: Int) {
        history.withLock { $0.footprint }
    }

    var availability: UndoAvailability {
        history.withLock { $0.availability }
    }

    /// Runs `reducer` for `action` and notes it, with the state before it if the action starts a group.
    @usableFromInline
    func reduce(
        _ state: inout State, _ action: Action, with reducer: (inout State, Action) -> Effect<Action>
    ) -> Effect<Action> {
        // One reading for both questions: a group joined by the first and not by the second would lack its state.
        let now = readsClock ? ContinuousClock.now : nil
        // An action that is not undoable starts no group: one lock, not two, on the way of every such dispatch.
        let startsGroup = policy.isUndoable(action) && history.withLock { $0.startsGroup(with: action, at: now, policy: policy) }
        let before = startsGroup ? state : nil
        let effect = reducer(&state, action)
        history.withLock { $0.record(action, before: before, at: now, policy: policy) }
        return effect
    }

    /// Undoes or redoes with `step`, and returns the state that makes, or `nil` if there was nothing to do. The
    /// reducer runs outside the history's lock, so that one that asks whether it can undo does not find it taken.
    func state(
        after step: (inout UndoHistory<State, Action>) -> UndoHistory<State, Action>.Replay?,
        reducer: (inout State, Action) -> Effect<Action>
    ) -> State? {
        history.withLock { step(&$0) }?.state(with: reducer)
    }

    func forgetAll() {
        history.withLock { $0.forgetAll() }
    }

    func openGroup(named name: String?) {
        history.withLock { $0.openExplicitGroup(named: name) }
    }

    func closeGroup() {
        history.withLock { $0.closeExplicitGroup() }
    }
}
