import Foundation

/// What a user can do: the only ways the database changes.
public enum TrackerAction: Codable, Equatable, Sendable {
    /// Adds a project; the name must pass ``ProjectName``'s rules and be unique ignoring case.
    case addProject(name: String)
    /// Gives the project another name, under the same rules as ``addProject(name:)`` (a change of case alone is
    /// allowed: the name is unique ignoring case among the *other* projects).
    case renameProject(id: Int64, name: String)
    /// Deletes the project and all its activities (kept an hour, for ``restoreProject(id:)``).
    case deleteProject(id: Int64)
    /// Undoes a delete: the project comes back with its id, name and activities.
    case restoreProject(id: Int64)
    /// Starts an activity on a project that has none running.
    case startActivity(projectID: Int64)
    /// Stops the running activity of a project.
    case stopActivity(projectID: Int64)
    /// Adds a finished activity by hand (time tracked elsewhere). It stops after it starts, is not in the future, and
    /// overlaps none of the project's other activities.
    case addActivity(projectID: Int64, startedAt: Date, stoppedAt: Date)
    /// Changes an activity's start and stop under the same rules. The running activity keeps running: give it no stop
    /// (``stopActivity(projectID:)`` stops it), and give a finished one a stop.
    case editActivity(id: Int64, startedAt: Date, stoppedAt: Date?)
    /// Deletes one activity.
    case deleteActivity(id: Int64)
    /// Adds what an export holds and the database does not (``TrackerExport``): projects by name, activities by start
    /// and stop, each under the rules of ``addProject(name:)`` and ``addActivity(projectID:startedAt:stoppedAt:)``.
    /// All of it or nothing: a row against the rules refuses the whole import, naming its line.
    case importRows([ExportRow])
    /// Takes back the newest change of the actions above, whichever process made it.
    case undo
    /// Makes again the newest change ``undo`` took back.
    case redo
}
