import Foundation

/// An action a store applied, and when.
public struct RecordedAction<Action: Sendable>: Sendable {
    public let date: Date
    public let action: Action

    public init(date: Date, action: Action) {
        self.date = date
        self.action = action
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

extension RecordedAction: Codable where Action: Codable {}
