import CustomDump

/// Why the state a step left is not what the test asserted, as a failure message.
@usableFromInline
struct StateMismatch {
    @usableFromInline let message: String

    /// - Parameters:
    ///   - step: The action applied, with the states before and after it.
    ///   - expected: The state the assertion closure made.
    ///   - exhaustive: Whether every change must be asserted.
    ///   - asserted: Whether the test gave an assertion closure.
    /// - Returns: `nil` when the state is what the test asserted.
    @inlinable
    init?<State: Equatable, Action>(
        step: TestStep<State, Action>,
        expected: State,
        exhaustive: Bool,
        asserted: Bool
    ) {
        // Described only on failure, out of line: a description is built by reflection, and costs more than the
        // whole step.
        if expected != step.after {
            message = Self.unexpectedState(after: step.action.action, expected: expected, actual: step.after)
        } else if exhaustive, asserted, step.before == step.after {
            // The closure changed nothing and neither did the action: the test says "this changes the state" of an
            // action that does not, which is worth knowing (TCA reports it the same way).
            message = Self.noChange(after: step.action.action)
        } else {
            return nil
        }
    }

    @usableFromInline
    static func unexpectedState<State>(after action: Any, expected: State, actual: State) -> String {
        // Two states may differ where their dumps do not (a value whose `==` looks at more than it shows).
        let difference = diff(expected, actual, format: .proportional) ?? """
            − \(described(expected))
            + \(described(actual))
            """
        return """
            The state after \(described(action)) is not what the test expected (− expected, + actual):
            \(difference)
            """
    }

    @usableFromInline
    static func noChange(after action: Any) -> String {
        """
        Expected the state to change after \(described(action)), but no change occurred. If no change is \
        expected, leave out the assertion closure.
        """
    }
}
