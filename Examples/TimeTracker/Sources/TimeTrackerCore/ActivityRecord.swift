import Foundation

/// An activity as a project's history shows it.
public struct ActivityRecord: Equatable, Sendable, Identifiable {
    public var id: Int64
    public var projectID: Int64
    public var startedAt: Date
    /// `nil` while it runs.
    public var stoppedAt: Date?

    public init(id: Int64, projectID: Int64, startedAt: Date, stoppedAt: Date?) {
        self.id = id
        self.projectID = projectID
        self.startedAt = startedAt
        self.stoppedAt = stoppedAt
    }

    /// How long it took; a running one, until `now`.
    public func duration(at now: Date) -> Double {
        max(0, (stoppedAt ?? now).timeIntervalSince(startedAt))
    }
}

/// An activity as JSON: what `timetrack history --json` and `GET /api/projects/{id}/activities` give.
public struct ActivityPayload: Codable, Equatable, Sendable {
    public var id: Int64
    public var projectID: Int64
    /// Seconds since 1970.
    public var startedAt: Double
    /// Seconds since 1970; absent while it runs.
    public var stoppedAt: Double?

    public init(_ activity: ActivityRecord) {
        id = activity.id
        projectID = activity.projectID
        startedAt = activity.startedAt.timeIntervalSince1970
        stoppedAt = activity.stoppedAt?.timeIntervalSince1970
    }
}
