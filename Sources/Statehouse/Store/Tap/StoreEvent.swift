import Foundation

/// Something a store did to its state, with the state it left: what a debugging tool watching the store sees (see
/// ``Store/tap(_:)``).
public struct StoreEvent<State: Sendable, Action: Sendable>: Sendable {
    /// What changed the state.
    public enum Kind: Sendable {
        /// The store applied `action`, which `source` sent.
        case action(Action, source: ActionSource)
        /// The state was replaced whole, without an action.
        case replaced(StateReplacement)
    }

    public let kind: Kind
    /// When the store applied it.
    public let date: Date
    /// The state right after it.
    public let state: State

    @inlinable
    init(kind: Kind, date: Date, state: State) {
        self.kind = kind
        self.date = date
        self.state = state
    }
}

/// Where an action a store applied came from.
public enum ActionSource: Sendable, Hashable, CustomStringConvertible {
    /// `dispatch` or `send`, from outside the store, or from a reducer or subscriber.
    case dispatch
    /// An effect sent it back.
    case effect
    /// The middleware of this name dispatched it (see ``Middleware/init(name:_:)``); middleware without a name
    /// counts as `dispatch`.
    case middleware(String)

    public var description: String {
        switch self {
        case .dispatch: "dispatch"
        case .effect: "effect"
        case .middleware(let name): "middleware \(name)"
        }
    }
}

/// Why a store's state was replaced whole rather than changed by an action.
public enum StateReplacement: String, Sendable, Hashable {
    /// ``Store/undo()``.
    case undo
    /// ``Store/redo()``.
    case redo
    /// ``Store/travel(to:)``, ``Store/replay(_:)`` or ``Store/jump(to:)``.
    case travel
    /// Another process or machine stored a newer state, which the store took.
    case storage
}
