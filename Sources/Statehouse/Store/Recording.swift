import Foundation

/// An action a store applied, when, and whether an effect sent it.
public struct RecordedAction<Action: Sendable>: Sendable {
    public let date: Date
    public let action: Action
    /// Whether an effect sent the action back, rather than `dispatch` or `send`: replaying through a `TestStore`,
    /// the effect sends it again, and the test receives it.
    public let sentByEffect: Bool

    public init(date: Date, action: Action, sentByEffect: Bool = false) {
        self.date = date
        self.action = action
        self.sentByEffect = sentByEffect
    }
}

/// The actions a store applied from a starting state: enough to reproduce every state it went through.
public struct Recording<State: Sendable, Action: Sendable>: Sendable {
    /// The state when recording started.
    public let initialState: State
    /// The actions applied since, in order, with the actions effects sent back among them.
    public var actions: [RecordedAction<Action>]

    public init(initialState: State, actions: [RecordedAction<Action>] = []) {
        self.initialState = initialState
        self.actions = actions
    }

    /// The state after the first `count` actions, computed with `reducer` (effects are not run: the actions they
    /// sent are in the recording already).
    public func state(
        afterFirst count: Int,
        reducer: (inout State, Action) -> Effect<Action>
    ) -> State {
        precondition((0...actions.count).contains(count), "a recording of \(actions.count) actions has no step \(count)")
        var state = initialState
        for recorded in actions.prefix(count) {
            _ = reducer(&state, recorded.action)
        }
        return state
    }
}

/// `{"date": …, "action": …}`, with `"sentByEffect": true` for an action an effect sent; a line without it (as
/// recordings were written before it existed) is an action dispatched.
extension RecordedAction: Codable where Action: Codable {
    private enum CodingKeys: String, CodingKey {
        case date, action, sentByEffect
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            date: try container.decode(Date.self, forKey: .date),
            action: try container.decode(Action.self, forKey: .action),
            sentByEffect: try container.decodeIfPresent(Bool.self, forKey: .sentByEffect) ?? false
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(date, forKey: .date)
        try container.encode(action, forKey: .action)
        if sentByEffect { try container.encode(true, forKey: .sentByEffect) }
    }
}
