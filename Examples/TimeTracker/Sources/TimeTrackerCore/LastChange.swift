import Foundation

/// The newest change to the tracker, and who made it: so that a view can say "Add Reading, by timetrack add on
/// laptop" when the change came from somewhere else.
public struct LastChange: Equatable, Sendable, Encodable {
    /// The change as its undo step names it ("Add Reading", "Undo Delete Writing").
    public var summary: String
    /// Who made it: ``TimeTracker/origin`` of the tracker that applied it.
    public var origin: String
    public var at: Date

    public init(summary: String, origin: String, at: Date) {
        self.summary = summary
        self.origin = origin
        self.at = at
    }
}
