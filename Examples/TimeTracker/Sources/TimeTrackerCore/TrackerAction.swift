/// What a user can do: the only ways the database changes.
public enum TrackerAction: Equatable, Sendable {
    case addProject(name: String)
    /// Deletes the project and all its activities.
    case deleteProject(id: Int64)
    case startActivity(projectID: Int64)
    case stopActivity(projectID: Int64)
}
