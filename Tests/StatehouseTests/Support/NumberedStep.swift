/// An action numbered by the thread (or other source) that dispatched it: a reducer can tell whether each source's
/// actions arrive in order.
struct NumberedStep: Sendable, Equatable {
    /// Who sent it: in the inbox tests, a thread's number × 2 (+ 1 for the echo its effect sends).
    var source: Int
    var sequence: Int
}
