import Foundation

/// Everything a view shows: every project with its elapsed time and running activity, derived from the database.
public struct TrackerState: Equatable, Sendable, Encodable {
    /// Ordered by name, ignoring case.
    public var projects: [ProjectSummary]
    /// Why the tracker stopped working, for every view to show: the database file was removed or replaced. Once
    /// set, it stays: nothing more is written, and the projects are the last ones read.
    public var problem: String?
    /// What `undo` would take back ("Delete Writing"), if anything.
    public var undoName: String?
    /// What `redo` would make again, if anything.
    public var redoName: String?
    /// The newest change, and who made it.
    public var lastChange: LastChange?

    /// A state with `projects`, none by default.
    public init(projects: [ProjectSummary] = [], problem: String? = nil, undoName: String? = nil, redoName: String? = nil) {
        self.projects = projects
        self.problem = problem
        self.undoName = undoName
        self.redoName = redoName
    }

    /// The project with this id, if there is one.
    public func project(id: Int64) -> ProjectSummary? {
        projects.first { $0.id == id }
    }

    /// The project whose name is `name`, ignoring case and surrounding white space; the one with exactly this name
    /// first, should two names be one ignoring case (see ``TimeTracker/notices``).
    public func project(named name: String) -> ProjectSummary? {
        let exact = name.trimmingCharacters(in: .whitespacesAndNewlines).precomposedStringWithCanonicalMapping
        if let project = projects.first(where: { $0.name == exact }) { return project }
        let key = ProjectName.key(for: name)
        return projects.first { ProjectName.key(for: $0.name) == key }
    }
}

/// A project as views show it.
public struct ProjectSummary: Equatable, Sendable, Identifiable, Encodable {
    /// The database's id for the project.
    public var id: Int64
    /// The name as the user typed it, trimmed.
    public var name: String
    /// When the project was added.
    public var created: Date
    /// The time of the project's finished activities.
    public var elapsedSeconds: Double
    /// When the running activity started; `nil` when the project is stopped.
    public var runningSince: Date?

    /// A project as the database describes it.
    public init(id: Int64, name: String, created: Date, elapsedSeconds: Double, runningSince: Date?) {
        self.id = id
        self.name = name
        self.created = created
        self.elapsedSeconds = elapsedSeconds
        self.runningSince = runningSince
    }

    /// Whether an activity is running.
    public var isRunning: Bool { runningSince != nil }

    /// What a ticking timer shows at `now`: the finished activities plus the running one so far. Display only.
    public func elapsed(at now: Date) -> Double {
        elapsedSeconds + (runningSince.map { max(0, now.timeIntervalSince($0)) } ?? 0)
    }
}
