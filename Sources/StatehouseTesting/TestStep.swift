/// An action as the test store's inner `Store` sees it: sent by the test (numbered, so that `send` finds the step
/// it applied) or received from an effect.
enum TestStoreAction<Action: Sendable>: Sendable {
    case sent(Action, number: UInt64)
    case received(Action)

    var action: Action {
        switch self {
        case .sent(let action, _), .received(let action): action
        }
    }
}

/// One action the inner store applied, with the state before and after it: what the test asserts, later.
///
/// Recording the states as the store applies the actions is what makes the test store behave like the store: the
/// order, the effects' actions applied as they arrive, cancelled effects' actions dropped, are the store's own.
struct TestStep<State: Sendable, Action: Sendable>: Sendable {
    let action: TestStoreAction<Action>
    let before: State
    let after: State

    var isReceived: Bool {
        if case .received = action { true } else { false }
    }

    func isSent(number: UInt64) -> Bool {
        if case .sent(_, number) = action { true } else { false }
    }
}
