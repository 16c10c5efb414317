import Foundation

/// A project as JSON: what `timetrack list --json`, the API and the live page's events carry.
public struct ProjectPayload: Codable, Equatable, Sendable {
    /// The database's id for the project.
    public var id: Int64
    /// The project's name.
    public var name: String
    /// Whole seconds of the finished activities.
    public var elapsedSeconds: Int
    /// Whether an activity is running.
    public var running: Bool
    /// When the running activity started, in seconds since 1970; absent when stopped (and in `list --json`).
    public var runningSince: Double?

    /// The payload of `project`; `includingStart: false` leaves `runningSince` out.
    public init(_ project: ProjectSummary, includingStart: Bool = true) {
        id = project.id
        name = project.name
        elapsedSeconds = ClockFormat.wholeSeconds(project.elapsedSeconds)
        running = project.isRunning
        runningSince = includingStart ? project.runningSince?.timeIntervalSince1970 : nil
    }
}
