/// What an undoable action changed, row by row: enough to take it back exactly and to make it again.
///
/// An action is undone by applying its change's ``inverse``, not by a user action: undoing a start removes the very
/// activity it started (its id, its start time), and redoing puts that same row back, so that undoing and redoing
/// everything returns the database to what it was. Every apply checks that the rows are still as the change left
/// them; a change a writer that is not timetrack made since is refused, with what is in the way, and nothing is
/// written.
public enum TrackerChange: Codable, Equatable, Sendable {
    public struct Project: Codable, Equatable, Sendable {
        public var id: Int64
        public var name: String
        /// Seconds since 1970, as every time in the database.
        public var created: Double
    }

    public struct Activity: Codable, Equatable, Sendable {
        public var id: Int64
        public var projectID: Int64
        public var startedAt: Double
        /// `nil` while it runs.
        public var stoppedAt: Double?
    }

    case projectInserted(Project, activities: [Activity])
    case projectRemoved(Project, activities: [Activity])
    case activityInserted(Activity)
    case activityRemoved(Activity)
    case activityStopped(id: Int64, at: Double)
    case activityResumed(id: Int64, stoppedAt: Double)
    /// A project's name key, changed by a rename: its own, and the one it held, passed to the oldest project whose
    /// name collided with it (see ``TrackerDatabase/passOnNameKey(of:in:)``).
    public struct KeyChange: Codable, Equatable, Sendable {
        public var id: Int64
        public var from: String
        public var to: String
    }

    /// The project `id`, named `from`, is named `to`; `keys` are the name keys that change with it.
    case projectRenamed(id: Int64, from: String, to: String, keys: [KeyChange])

    /// An activity's start and stop.
    public struct Times: Codable, Equatable, Sendable {
        public var startedAt: Double
        public var stoppedAt: Double?
    }

    /// The activity `id`, at `from`, is at `to`.
    case activityTimesChanged(id: Int64, from: Times, to: Times)

    /// Several changes made as one (an import), in order.
    indirect case batch([TrackerChange])

    /// The change that takes this one back.
    public var inverse: TrackerChange {
        switch self {
        case .projectInserted(let project, let activities): .projectRemoved(project, activities: activities)
        case .projectRemoved(let project, let activities): .projectInserted(project, activities: activities)
        case .activityInserted(let activity): .activityRemoved(activity)
        case .activityRemoved(let activity): .activityInserted(activity)
        case .activityStopped(let id, let at): .activityResumed(id: id, stoppedAt: at)
        case .activityResumed(let id, let at): .activityStopped(id: id, at: at)
        case .projectRenamed(let id, let from, let to, let keys):
            .projectRenamed(id: id, from: to, to: from, keys: keys.map { KeyChange(id: $0.id, from: $0.to, to: $0.from) })
        case .activityTimesChanged(let id, let from, let to): .activityTimesChanged(id: id, from: to, to: from)
        case .batch(let changes): .batch(changes.reversed().map(\.inverse))
        }
    }
}
