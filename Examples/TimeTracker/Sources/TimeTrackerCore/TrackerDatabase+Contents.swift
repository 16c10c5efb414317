import Foundation

/// The database read whole as ``TrackerContents``, and written back into empty tables: how ``TrackerRules`` and
/// ``SessionRecorder`` see it.
extension TrackerDatabase {
    static func contents(in sql: any SQLStatements) throws -> TrackerContents {
        var contents = TrackerContents()
        contents.projects = try sql.rows("SELECT id, name, nameKey, created FROM project ORDER BY id", []).map { row in
            TrackerContents.Project(
                id: row[0].integer ?? 0, name: row[1].text ?? "", nameKey: row[2].text ?? "", created: row[3].real ?? 0
            )
        }
        contents.activities = try activities(in: "activity", sql)
        contents.deletedProjects = try sql.rows(
            "SELECT id, name, created, deletedAt FROM deletedProject ORDER BY id", []
        ).map { row in
            TrackerContents.DeletedProject(
                id: row[0].integer ?? 0, name: row[1].text ?? "", created: row[2].real ?? 0, deletedAt: row[3].real ?? 0
            )
        }
        contents.deletedActivities = try activities(in: "deletedActivity", sql)
        contents.undo = try undoSteps(on: "undo", sql)
        contents.redo = try undoSteps(on: "redo", sql)
        contents.lastProjectID = try sql.lastGeneratedID(in: "project")
        contents.lastActivityID = try sql.lastGeneratedID(in: "activity")
        return contents
    }

    /// Writes `contents` into tables that are empty, ids and all (on SQLite: ``TrackerRules``' copy).
    static func insert(_ contents: TrackerContents, in sql: GRDBStatements) throws {
        for project in contents.projects {
            try sql.execute(
                "INSERT INTO project (id, name, nameKey, created) VALUES (?, ?, ?, ?)",
                [.integer(project.id), .text(project.name), .text(project.nameKey), .real(project.created)]
            )
        }
        try insert(contents.activities, into: "activity", sql)
        for project in contents.deletedProjects {
            try sql.execute(
                "INSERT INTO deletedProject (id, name, created, deletedAt) VALUES (?, ?, ?, ?)",
                [.integer(project.id), .text(project.name), .real(project.created), .real(project.deletedAt)]
            )
        }
        try insert(contents.deletedActivities, into: "deletedActivity", sql)
        for (stack, steps) in [("undo", contents.undo), ("redo", contents.redo)] {
            for step in steps {
                let change = String(decoding: try JSONEncoder().encode(step.change), as: UTF8.self)
                try sql.execute(
                    "INSERT INTO undoStep (stack, name, change) VALUES (?, ?, ?)", [.text(stack), .text(step.name), .text(change)]
                )
            }
        }
        try sql.setLastGeneratedID(contents.lastProjectID, in: "project")
        try sql.setLastGeneratedID(contents.lastActivityID, in: "activity")
    }

    private static func activities(in table: String, _ sql: any SQLStatements) throws -> [TrackerChange.Activity] {
        try sql.rows("SELECT id, projectId, startedAt, stoppedAt FROM \(table) ORDER BY id", []).map { row in
            TrackerChange.Activity(
                id: row[0].integer ?? 0, projectID: row[1].integer ?? 0, startedAt: row[2].real ?? 0, stoppedAt: row[3].real
            )
        }
    }

    private static func insert(_ activities: [TrackerChange.Activity], into table: String, _ sql: any SQLStatements) throws {
        for activity in activities {
            try sql.execute(
                "INSERT INTO \(table) (id, projectId, startedAt, stoppedAt) VALUES (?, ?, ?, ?)",
                [.integer(activity.id), .integer(activity.projectID), .real(activity.startedAt),
                 activity.stoppedAt.map(SQLValue.real) ?? .null]
            )
        }
    }

    private static func undoSteps(on stack: String, _ sql: any SQLStatements) throws -> [TrackerContents.UndoStep] {
        try sql.rows("SELECT name, change FROM undoStep WHERE stack = ? ORDER BY id", [.text(stack)]).map { row in
            TrackerContents.UndoStep(
                name: row[0].text ?? "",
                change: try JSONDecoder().decode(TrackerChange.self, from: Data((row[1].text ?? "").utf8))
            )
        }
    }
}
