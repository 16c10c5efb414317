/// Why the state a step left is not what the test asserted, as a failure message.
struct StateMismatch {
    let message: String

    /// - Parameters:
    ///   - step: The action applied, with the states before and after it.
    ///   - expected: The state the assertion closure made.
    ///   - exhaustive: Whether every change must be asserted.
    ///   - asserted: Whether the test gave an assertion closure.
    /// - Returns: `nil` when the state is what the test asserted.
    init?<State: Equatable, Action>(
        step: TestStep<State, Action>,
        expected: State,
        exhaustive: Bool,
        asserted: Bool
    ) {
        // Described only on failure: a description is built by reflection, and costs more than the whole step.
        var action: String { ValueDescription.line(step.action.action) }
        if expected != step.after {
            message = """
                The state after \(action) is not what the test expected (− expected, + actual):
                \(lineDiff(expected: ValueDescription.lines(expected), actual: ValueDescription.lines(step.after)))
                """
        } else if exhaustive, asserted, step.before == step.after {
            // The closure changed nothing and neither did the action: the test says "this changes the state" of an
            // action that does not, which is worth knowing (TCA reports it the same way).
            message = """
                Expected the state to change after \(action), but no change occurred. If no change is expected, \
                leave out the assertion closure.
                """
        } else {
            return nil
        }
    }
}
