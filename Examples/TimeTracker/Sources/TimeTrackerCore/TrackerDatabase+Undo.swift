import Foundation

/// The undo history: the changes of the last actions, in the database beside the tables they changed, written in
/// the same transaction as the action. So `timetrack undo` in one process takes back what another did, a restart
/// forgets nothing, and a crash never leaves an action without its undo step or a step without its action.
///
/// Undo takes back the newest change, whoever made it (the history is the database's, as the data is), and puts it
/// on the redo stack; a new action empties that stack. The history keeps the last ``undoLimit`` steps.
extension TrackerDatabase {
    static let undoLimit = 100

    /// Notes `change`, named for a menu ("Delete Writing"), as the newest step to undo; forgets what could be redone.
    static func noteUndoable(_ change: TrackerChange, named name: String, in sql: any SQLStatements) throws {
        try sql.execute("DELETE FROM undoStep WHERE stack = 'redo'")
        try push(change, named: name, on: "undo", in: sql)
        try sql.execute(
            """
            DELETE FROM undoStep WHERE stack = 'undo' AND id NOT IN (
                SELECT id FROM undoStep WHERE stack = 'undo' ORDER BY id DESC LIMIT \(undoLimit))
            """
        )
    }

    /// Takes back the newest change (`undo`), or makes the newest undone one again (`redo`).
    /// - Returns: The project the step changed, if it is there after it.
    static func step(_ direction: UndoDirection, at now: Double, in sql: any SQLStatements) throws -> ProjectSummary? {
        let (from, to) = direction == .undo ? ("undo", "redo") : ("redo", "undo")
        guard let row = try sql.rows(
            "SELECT id, name, change FROM undoStep WHERE stack = ? ORDER BY id DESC LIMIT 1", [.text(from)]
        ).first, let id = row[0].integer, let name = row[1].text, let json = row[2].text else {
            throw direction == .undo ? TrackerError.nothingToUndo : TrackerError.nothingToRedo
        }
        let recorded = try JSONDecoder().decode(TrackerChange.self, from: Data(json.utf8))
        let change = direction == .undo ? recorded.inverse : recorded
        let project = try apply(change, at: now, in: sql)
        try sql.execute("DELETE FROM undoStep WHERE id = ?", [.integer(id)])
        try push(recorded, named: name, on: to, in: sql)
        return try project.flatMap { try summaries(in: sql, projectID: $0).first }
    }

    /// What undo and redo would do now, for the views.
    static func undoAvailability(in sql: any SQLStatements) throws -> (undo: String?, redo: String?) {
        func newest(_ stack: String) throws -> String? {
            try sql.value("SELECT name FROM undoStep WHERE stack = ? ORDER BY id DESC LIMIT 1", [.text(stack)])?.text
        }
        return (try newest("undo"), try newest("redo"))
    }

    private static func push(_ change: TrackerChange, named name: String, on stack: String, in sql: any SQLStatements) throws {
        let json = String(decoding: try JSONEncoder().encode(change), as: UTF8.self)
        try sql.execute(
            "INSERT INTO undoStep (stack, name, change) VALUES (?, ?, ?)", [.text(stack), .text(name), .text(json)]
        )
    }

    /// Applies `change` if the rows are as it expects; returns the id of the project it touched.
    static func apply(_ change: TrackerChange, at now: Double, in sql: any SQLStatements) throws -> Int64? {
        switch change {
        case .projectInserted(let project, let activities):
            let key = ProjectName.key(for: project.name)
            if let existing = try sql.value("SELECT name FROM project WHERE nameKey = ?", [.text(key)])?.text {
                throw TrackerError.duplicateName(existing: existing)
            }
            try sql.execute("DELETE FROM deletedProject WHERE id = ?", [.integer(project.id)])
            try sql.execute(
                "INSERT INTO project (id, name, nameKey, created) VALUES (?, ?, ?, ?)",
                [.integer(project.id), .text(project.name), .text(key), .real(project.created)]
            )
            for activity in activities { try insert(activity, in: sql) }
            return project.id
        case .projectRemoved(let project, let activities):
            guard try self.project(project.id, in: sql) == project else { throw changedSince(project.name) }
            guard try self.activities(of: project.id, in: sql) == activities else { throw changedSince(project.name) }
            try moveToTrash(project.id, at: now, in: sql)
            try passOnNameKey(of: project.id, in: sql)
            try sql.execute("DELETE FROM project WHERE id = ?", [.integer(project.id)])
            return nil
        case .activityInserted(let activity):
            if let stoppedAt = activity.stoppedAt {
                try checkNoOverlap(activity.projectID, from: activity.startedAt, to: stoppedAt, except: activity.id, in: sql)
            }
            try insert(activity, in: sql)
            return activity.projectID
        case .activityRemoved(let activity):
            guard try self.activity(activity.id, in: sql) == activity else { throw try changedSince(activity, in: sql) }
            try sql.execute("DELETE FROM activity WHERE id = ?", [.integer(activity.id)])
            return activity.projectID
        case .activityStopped(let id, let at):
            guard let activity = try self.activity(id, in: sql), activity.stoppedAt == nil else {
                throw TrackerError.changedSince("the activity was stopped or removed since")
            }
            try sql.execute("UPDATE activity SET stoppedAt = ? WHERE id = ?", [.real(at), .integer(id)])
            return activity.projectID
        case .activityResumed(let id, let stoppedAt):
            guard let activity = try self.activity(id, in: sql), activity.stoppedAt == stoppedAt else {
                throw TrackerError.changedSince("the activity was changed or removed since")
            }
            if try sql.value(
                "SELECT 1 FROM activity WHERE projectId = ? AND stoppedAt IS NULL", [.integer(activity.projectID)]
            ) != nil {
                throw try changedSince(activity, in: sql)
            }
            try sql.execute("UPDATE activity SET stoppedAt = NULL WHERE id = ?", [.integer(id)])
            return activity.projectID
        case .activityTimesChanged(let id, let from, let to):
            guard let activity = try self.activity(id, in: sql),
                  TrackerChange.Times(startedAt: activity.startedAt, stoppedAt: activity.stoppedAt) == from
            else { throw TrackerError.changedSince("the activity was changed or removed since") }
            try checkNoOverlap(activity.projectID, from: to.startedAt, to: to.stoppedAt, except: id, in: sql)
            try setTimes(of: id, to: to, in: sql)
            return activity.projectID
        case .projectRenamed(let id, let from, let to, let keys):
            try applyRename(id, from: from, to: to, keys: keys, in: sql)
            return id
        case .batch(let changes):
            return try changes.reduce(nil) { _, change in try apply(change, at: now, in: sql) }
        }
    }

    private static func insert(_ activity: TrackerChange.Activity, in sql: any SQLStatements) throws {
        guard try project(activity.projectID, in: sql) != nil else {
            throw TrackerError.changedSince("its project was deleted since")
        }
        if activity.stoppedAt == nil, try sql.value(
            "SELECT 1 FROM activity WHERE projectId = ? AND stoppedAt IS NULL", [.integer(activity.projectID)]
        ) != nil {
            throw try changedSince(activity, in: sql)
        }
        try sql.execute(
            "INSERT INTO activity (id, projectId, startedAt, stoppedAt) VALUES (?, ?, ?, ?)",
            [.integer(activity.id), .integer(activity.projectID), .real(activity.startedAt),
             activity.stoppedAt.map(SQLValue.real) ?? .null]
        )
    }

    static func project(_ id: Int64, in sql: any SQLStatements) throws -> TrackerChange.Project? {
        try sql.rows("SELECT name, created FROM project WHERE id = ?", [.integer(id)]).first.map { row in
            TrackerChange.Project(id: id, name: row[0].text ?? "", created: row[1].real ?? 0)
        }
    }

    static func activities(of projectID: Int64, in sql: any SQLStatements) throws -> [TrackerChange.Activity] {
        try sql.rows(
            "SELECT id, startedAt, stoppedAt FROM activity WHERE projectId = ? ORDER BY id", [.integer(projectID)]
        ).map { row in
            TrackerChange.Activity(id: row[0].integer ?? 0, projectID: projectID, startedAt: row[1].real ?? 0, stoppedAt: row[2].real)
        }
    }

    static func activity(_ id: Int64, in sql: any SQLStatements) throws -> TrackerChange.Activity? {
        try sql.rows("SELECT projectId, startedAt, stoppedAt FROM activity WHERE id = ?", [.integer(id)]).first.map { row in
            TrackerChange.Activity(id: id, projectID: row[0].integer ?? 0, startedAt: row[1].real ?? 0, stoppedAt: row[2].real)
        }
    }

    static func changedSince(_ project: String) -> TrackerError {
        .changedSince("\"\(project)\" or its activities changed since")
    }

    private static func changedSince(_ activity: TrackerChange.Activity, in sql: any SQLStatements) throws -> TrackerError {
        changedSince(try project(activity.projectID, in: sql)?.name ?? "its project")
    }
}

/// Which way through the undo history.
enum UndoDirection: Sendable {
    case undo, redo
}
