/// What the ids of an action meant where it was made, so that another copy of the tracker, whose ids differ, finds
/// the same rows: a project by its name's key and its creation time, a deleted one by its name's key and the time it
/// was deleted, an activity by its project and its start, an undo or redo by the name of its step (two steps of the
/// same name are not told apart).
///
/// Ids are given by each copy: a project added in a copy offline takes the next id there, and the server may have
/// given that id to another project meanwhile. An action names rows by id; resolved by these references where it is
/// applied (in the server's database, and in every copy as it applies its pending actions again), it reaches the
/// rows the user meant, or it is refused and says why.
public struct TrackerReferences: Codable, Equatable, Sendable {
    /// The key (``ProjectName/key(for:)``) of the project the action names, or of the deleted one it restores.
    public var project: String?
    /// When that project was made: another project given the name since is not it.
    public var projectCreated: Double?
    /// When the deleted project it restores was deleted: the same name may have been deleted more than once.
    public var deletedAt: Double?
    /// The start of the activity the action names (with ``project``, its project's key).
    public var activityStart: Double?
    /// The name of the undo or redo step the action goes through.
    public var step: String?

    /// The references of `action` in `contents`, the contents it is applied to where it is made.
    public init(of action: TrackerAction, in contents: TrackerContents) {
        func name(project id: Int64?) {
            let named = contents.projects.first { $0.id == id }
            project = named?.nameKey
            projectCreated = named?.created
        }
        switch action {
        case .renameProject(let id, _), .deleteProject(let id), .startActivity(let id), .stopActivity(let id),
             .addActivity(let id, _, _):
            name(project: id)
        case .restoreProject(let id):
            let deleted = contents.deletedProjects.first { $0.id == id }
            project = deleted.map { ProjectName.key(for: $0.name) }
            deletedAt = deleted?.deletedAt
        case .editActivity(let id, _, _), .deleteActivity(let id):
            let activity = contents.activities.first { $0.id == id }
            name(project: activity?.projectID)
            activityStart = activity?.startedAt
        case .undo:
            step = contents.undo.last?.name
        case .redo:
            step = contents.redo.last?.name
        case .addProject, .importRows:
            break
        }
    }
}

extension SyncedTrackerAction {
    /// The action with its ids those of `contents`, found by its references.
    ///
    /// - Throws: ``TrackerError/changedElsewhere(_:)`` when a row it names is not in `contents` any more, or the newest
    ///   undo or redo step is another.
    public func resolved(in contents: TrackerContents) throws(TrackerError) -> TrackerAction {
        let action = logged.action
        func projectID() throws(TrackerError) -> Int64 {
            guard let key = references.project,
                  let project = contents.projects.first(where: { $0.nameKey == key && $0.created == references.projectCreated })
            else {
                throw .changedElsewhere("the project it names is not there any more")
            }
            return project.id
        }
        func activityID() throws(TrackerError) -> Int64 {
            let project = try projectID()
            guard let start = references.activityStart,
                  let activity = contents.activities.first(where: { $0.projectID == project && $0.startedAt == start })
            else {
                throw .changedElsewhere("the activity it names is not there any more")
            }
            return activity.id
        }
        func checkStep(_ steps: [TrackerContents.UndoStep], _ verb: String) throws(TrackerError) {
            guard let newest = steps.last?.name, newest == references.step else {
                throw .changedElsewhere("the change to \(verb) was \"\(references.step ?? "")\" and is now \(steps.last.map { "\"\($0.name)\"" } ?? "none")")
            }
        }
        switch action {
        case .renameProject(_, let name): return .renameProject(id: try projectID(), name: name)
        case .deleteProject: return .deleteProject(id: try projectID())
        case .restoreProject:
            guard let key = references.project,
                  let deleted = contents.deletedProjects.first(where: {
                      ProjectName.key(for: $0.name) == key && $0.deletedAt == references.deletedAt
                  })
            else { throw .changedElsewhere("the deleted project it restores is not there any more") }
            return .restoreProject(id: deleted.id)
        case .startActivity: return .startActivity(projectID: try projectID())
        case .stopActivity: return .stopActivity(projectID: try projectID())
        case .addActivity(_, let start, let stop): return .addActivity(projectID: try projectID(), startedAt: start, stoppedAt: stop)
        case .editActivity(_, let start, let stop): return .editActivity(id: try activityID(), startedAt: start, stoppedAt: stop)
        case .deleteActivity: return .deleteActivity(id: try activityID())
        case .undo:
            try checkStep(contents.undo, "undo")
            return action
        case .redo:
            try checkStep(contents.redo, "redo")
            return action
        case .addProject, .importRows:
            return action
        }
    }
}
