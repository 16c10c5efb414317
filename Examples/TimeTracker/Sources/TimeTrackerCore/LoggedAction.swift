/// An action as the database's log keeps it: what was done, and the time it was applied at.
///
/// With the contents it was applied to, it is all ``TrackerRules`` needs to compute the contents after it: the time
/// is part of the action, never read from a clock.
public struct LoggedAction: Codable, Equatable, Sendable {
    public var action: TrackerAction
    /// Seconds since 1970, exactly as the database keeps times.
    public var at: Double

    public init(_ action: TrackerAction, at: Double) {
        self.action = action
        self.at = at
    }
}
