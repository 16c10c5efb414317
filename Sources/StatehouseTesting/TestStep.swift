/// An action as the test store's inner `Store` sees it: sent by the test (numbered, so that `send` finds the step
/// it applied) or received from an effect.
@usableFromInline
enum TestStoreAction<Action: Sendable>: Sendable {
    case sent(Action, number: UInt64)
    case received(Action)

    @inlinable
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
@usableFromInline
struct TestStep<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline let action: TestStoreAction<Action>
    @usableFromInline let before: State
    @usableFromInline let after: State

    @inlinable
    init(action: TestStoreAction<Action>, before: State, after: State) {
        self.action = action
        self.before = before
        self.after = after
    }

    @inlinable
    var isReceived: Bool {
        if case .received = action { true } else { false }
    }

    @inlinable
    func isSent(number: UInt64) -> Bool {
        if case .sent(_, number) = action { true } else { false }
    }

    /// The actions of the received steps among `steps`, in order.
    ///
    /// A loop, not `filter(\.isReceived).map(\.action.action)`: in this generic code each key path would be built at
    /// run time on every call, which cost most of a `send`.
    @inlinable
    static func receivedActions(in steps: [Self]) -> [Action] {
        var actions: [Action] = []
        for step in steps where step.isReceived {
            actions.append(step.action.action)
        }
        return actions
    }
}
