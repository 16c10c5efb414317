/// Everything a tracker's database holds, as values: the projects and activities, the trash and the undo history.
///
/// What a recorded session starts from, and what each of its actions leads to under ``TrackerRules``. Rows are in the
/// order of their ids, the undo and redo stacks oldest first.
public struct TrackerContents: Codable, Equatable, Sendable {
    public struct Project: Codable, Equatable, Sendable {
        public var id: Int64
        public var name: String
        /// What makes names unique, ignoring case (``ProjectName/key``).
        public var nameKey: String
        /// Seconds since 1970.
        public var created: Double
    }

    public struct DeletedProject: Codable, Equatable, Sendable {
        public var id: Int64
        public var name: String
        public var created: Double
        public var deletedAt: Double
    }

    /// A step of the undo or redo stack: its name for a menu, and what it changed.
    public struct UndoStep: Codable, Equatable, Sendable {
        public var name: String
        public var change: TrackerChange
    }

    public var projects: [Project] = []
    public var activities: [TrackerChange.Activity] = []
    public var deletedProjects: [DeletedProject] = []
    public var deletedActivities: [TrackerChange.Activity] = []
    public var undo: [UndoStep] = []
    public var redo: [UndoStep] = []
    /// The last project id the database gave: the next project's is above it, even when that project was deleted.
    public var lastProjectID: Int64 = 0
    /// The last activity id the database gave.
    public var lastActivityID: Int64 = 0

    /// An empty database's.
    public init() {}
}
