/// A state with its undo history in it, for stores whose state leaves the process: persisted, replicated, synced.
///
/// ```swift
/// let store = Store(
///     initialState: Undoable(Doc()), key: "doc", storage: .file(directory: folder),
///     reducer: Reducer(docReducer).undoable(UndoPolicy { $0.isUndoable })
/// )
/// store.dispatch(.action(.delete("Writing")))
/// store.undo()                                    // dispatches .undo
/// let lists = store.state.present.lists
/// ```
///
/// The history travels with the state: it is saved with it in one write, so it survives a restart and a crash
/// mid-write; another process that takes the stored state takes the history with it, so its undo takes back the
/// newest group whichever process applied it, and applies the others' later actions again; and on a replicated or
/// synced store, undo and redo are actions (``UndoableAction``) every replica and the server apply alike. Undo is
/// selective and bounded as for a store made with an ``UndoPolicy``; see <doc:UndoAndRedo>. Grouping by time needs a clock the replicas share, so it is not offered here: an
/// ``UndoableAction/group(_:_:)`` makes one group of several actions.
public struct Undoable<State: Sendable, Action: Sendable>: Sendable {
    /// The state itself.
    public internal(set) var present: State
    var history = UndoHistory<State, Action>()

    public init(_ present: State) {
        self.present = present
    }

    /// Whether `.undo` and `.redo` would change the state, and the names of what they would undo and redo.
    public var undoAvailability: UndoAvailability {
        history.availability
    }
}

extension Undoable: Equatable where State: Equatable, Action: Equatable {}
extension Undoable: Codable where State: Codable, Action: Codable {}

/// An action of a store of ``Undoable`` state: the app's own, several of them as one undo group, undo or redo.
public enum UndoableAction<Action: Sendable>: Sendable {
    case action(Action)
    /// The actions, applied in order, undone and redone as one group (a gesture that changes several things).
    case group(String?, [Action])
    case undo
    case redo
}

extension UndoableAction: Equatable where Action: Equatable {}
extension UndoableAction: Codable where Action: Codable {}

extension Reducer where State: Sendable {
    /// This reducer on an ``Undoable`` state: it applies ``UndoableAction/action(_:)`` and
    /// ``UndoableAction/group(_:_:)`` and notes them in the history, and undoes and redoes them.
    ///
    /// The reducer must be pure (see ``UndoPolicy``): undo applies actions again, here and on every replica.
    public func undoable(_ policy: UndoPolicy<Action>) -> Reducer<Undoable<State, Action>, UndoableAction<Action>> {
        Reducer<Undoable<State, Action>, UndoableAction<Action>> { undoable, action in
            switch action {
            case .action(let action):
                return undoable.apply(action, policy: policy, with: reduce).map { .action($0) }
            case .group(let name, let actions):
                undoable.history.openExplicitGroup(named: name)
                defer { undoable.history.closeExplicitGroup() }
                let effects = actions.map { undoable.apply($0, policy: policy, with: reduce) }
                return Effect.merge(effects).map { .action($0) }
            case .undo:
                if let replay = undoable.history.undo() { undoable.present = replay.state(with: reduce) }
                return .none
            case .redo:
                if let replay = undoable.history.redo() { undoable.present = replay.state(with: reduce) }
                return .none
            }
        }
    }
}

extension Undoable {
    fileprivate mutating func apply(
        _ action: Action, policy: UndoPolicy<Action>, with reducer: (inout State, Action) -> Effect<Action>
    ) -> Effect<Action> {
        let before = history.startsGroup(with: action, at: nil, policy: policy) ? present : nil
        let effect = reducer(&present, action)
        history.record(action, before: before, at: nil, policy: policy)
        return effect
    }
}

/// A state that knows what undo would do: an ``Undoable``. `Store.canUndo` asks it when the store has no history of
/// its own.
protocol UndoAvailabilityProviding {
    var undoAvailability: UndoAvailability { get }
}

extension Undoable: UndoAvailabilityProviding {}

/// Undo or redo, as the action of a store of ``Undoable`` state: what `Store.undo()` and `redo()` dispatch there.
enum UndoCommand {
    case undo, redo

    /// The action that says so, if `Action` is an ``UndoableAction``.
    func action<Action>(of _: Action.Type) -> Action? {
        (Action.self as? any UndoCommandAction.Type).flatMap { $0.command(self) as? Action }
    }
}

protocol UndoCommandAction {
    static func command(_ command: UndoCommand) -> Self
}

extension UndoableAction: UndoCommandAction {
    static func command(_ command: UndoCommand) -> Self {
        switch command {
        case .undo: .undo
        case .redo: .redo
        }
    }
}
