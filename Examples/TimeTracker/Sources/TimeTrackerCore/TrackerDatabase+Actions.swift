import Foundation

extension TrackerDatabase {
    /// The action's checks and writes, inside the backend's transaction, with its step in the undo history.
    static func apply(_ action: TrackerAction, at now: Double, in sql: any SQLStatements) throws -> ProjectSummary? {
        switch action {
        case .addProject(let raw):
            let name = try ProjectName(raw)
            if let existing = try sql.value("SELECT name FROM project WHERE nameKey = ?", [.text(name.key)])?.text {
                throw TrackerError.duplicateName(existing: existing)
            }
            let id = try sql.value(
                "INSERT INTO project (name, nameKey, created) VALUES (?, ?, ?) RETURNING id",
                [.text(name.display), .text(name.key), .real(now)]
            )?.integer ?? 0
            try noteProject(id, named: "Add", in: sql)
            return try summary(of: id, in: sql)
        case .renameProject(let id, let raw):
            let project = try existingProject(id, in: sql)
            let name = try ProjectName(raw)
            guard name.display != project.name else { return try summary(of: id, in: sql) }
            let change = try renaming(project, to: name, in: sql)
            _ = try apply(change, at: now, in: sql)
            try noteUndoable(change, named: "Rename \(project.name)", in: sql)
            return try summary(of: id, in: sql)
        case .deleteProject(let id):
            let project = try existingProject(id, in: sql)
            let removed = TrackerChange.projectRemoved(project, activities: try activities(of: id, in: sql))
            try moveToTrash(id, at: now, in: sql)
            try passOnNameKey(of: id, in: sql)
            try sql.execute("DELETE FROM project WHERE id = ?", [.integer(id)])
            try noteUndoable(removed, named: "Delete \(project.name)", in: sql)
            return nil
        case .restoreProject(let id):
            let restored = try restore(id, at: now, in: sql)
            try noteProject(id, named: "Restore", in: sql)
            return restored
        case .startActivity(let id):
            let project = try name(of: id, in: sql)
            if try isRunning(id, in: sql) { throw TrackerError.alreadyRunning(project: project) }
            // A clock set back (an NTP step, a laptop resuming) must not start an activity inside the last one,
            // which would count the same time twice: it starts where the last one ended instead.
            let lastStop = try sql.value("SELECT MAX(stoppedAt) FROM activity WHERE projectId = ?", [.integer(id)])?.real
            let activity = try sql.value(
                "INSERT INTO activity (projectId, startedAt) VALUES (?, ?) RETURNING id",
                [.integer(id), .real(max(now, lastStop ?? now))]
            )?.integer ?? 0
            try noteUndoable(.activityInserted(try self.activity(activity, in: sql)!), named: "Start \(project)", in: sql)
            return try summary(of: id, in: sql)
        case .stopActivity(let id):
            let project = try name(of: id, in: sql)
            guard let running = try sql.value(
                "SELECT id FROM activity WHERE projectId = ? AND stoppedAt IS NULL", [.integer(id)]
            )?.integer else { throw TrackerError.notRunning(project: project) }
            // A clock set back since the start must not make a negative duration.
            let stoppedAt = try sql.value(
                """
                UPDATE activity SET stoppedAt = CASE WHEN startedAt > ? THEN startedAt ELSE ? END
                WHERE id = ? RETURNING stoppedAt
                """,
                [.real(now), .real(now), .integer(running)]
            )?.real ?? now
            try noteUndoable(.activityStopped(id: running, at: stoppedAt), named: "Stop \(project)", in: sql)
            return try summary(of: id, in: sql)
        case .addActivity(let projectID, let start, let stop):
            return try addActivity(
                to: projectID, startedAt: start.timeIntervalSince1970, stoppedAt: stop.timeIntervalSince1970, now: now, in: sql
            )
        case .editActivity(let id, let start, let stop):
            return try editActivity(
                id, to: .init(startedAt: start.timeIntervalSince1970, stoppedAt: stop?.timeIntervalSince1970), now: now, in: sql
            )
        case .deleteActivity(let id):
            return try deleteActivity(id, in: sql)
        case .importRows(let rows):
            try importRows(rows, now: now, in: sql)
            return nil
        case .undo:
            return try step(.undo, at: now, in: sql)
        case .redo:
            return try step(.redo, at: now, in: sql)
        }
    }

    /// Notes the project `id` as it is now, with its activities, as inserted: `verb` and its name make the step's.
    private static func noteProject(_ id: Int64, named verb: String, in sql: any SQLStatements) throws {
        guard let project = try project(id, in: sql) else { return }
        try noteUndoable(
            .projectInserted(project, activities: try activities(of: id, in: sql)), named: "\(verb) \(project.name)",
            in: sql
        )
    }

    static func name(of id: Int64, in sql: any SQLStatements) throws -> String {
        try existingProject(id, in: sql).name
    }

    /// The project `id`, or ``TrackerError/projectNotFound(_:)``.
    private static func existingProject(_ id: Int64, in sql: any SQLStatements) throws -> TrackerChange.Project {
        guard let project = try project(id, in: sql) else { throw TrackerError.projectNotFound("with id \(id)") }
        return project
    }

    private static func isRunning(_ id: Int64, in sql: any SQLStatements) throws -> Bool {
        try !sql.rows("SELECT 1 FROM activity WHERE projectId = ? AND stoppedAt IS NULL", [.integer(id)]).isEmpty
    }

    static func summary(of id: Int64, in sql: any SQLStatements) throws -> ProjectSummary? {
        try summaries(in: sql, projectID: id).first
    }

    /// Deleting the project that holds a key gives it to the oldest project whose name collided with it, if any.
    static func passOnNameKey(of id: Int64, in sql: any SQLStatements) throws {
        guard let key = try sql.value("SELECT nameKey FROM project WHERE id = ?", [.integer(id)])?.text,
              let heir = try heir(ofNameKey: key, in: sql)
        else { return }
        try sql.execute("DELETE FROM project WHERE id = ?", [.integer(id)])
        try sql.execute("UPDATE project SET nameKey = ? WHERE id = ?", [.text(key), .integer(heir)])
    }

    /// The oldest project whose name collided with the one that holds `key`; none for a key that is a collided one.
    static func heir(ofNameKey key: String, in sql: any SQLStatements) throws -> Int64? {
        guard !key.contains(collisionMark) else { return nil }
        // The collided keys are the key, the mark (U+0001), an id: in binary order, between key + U+0001 and key + U+0002.
        return try sql.value(
            """
            SELECT id FROM project WHERE nameKey\(sql.binaryCollation) >= ? AND nameKey\(sql.binaryCollation) < ?
            ORDER BY id LIMIT 1
            """,
            [.text(key + "\u{1}"), .text(key + "\u{2}")]
        )?.integer
    }
}
