import Foundation

extension TrackerDatabase {
    /// The most paged read there is: a project's activities, newest first, `limit` after `last` (the last one of the
    /// page before). Keyed on the start and the id, so that a page is the same whatever was added before it since.
    /// Blocks: call it off the cooperative pool.
    func activities(of projectID: Int64, limit: Int, after last: ActivityRecord?) throws(TrackerError) -> [ActivityRecord] {
        try backend.read { sql in
            _ = try Self.name(of: projectID, in: sql)
            let page = last == nil ? "" : "AND (startedAt < ? OR (startedAt = ? AND id < ?))"
            let cursor: [SQLValue] = last.map { last in
                let start = SQLValue.real(last.startedAt.timeIntervalSince1970)
                return [start, start, .integer(last.id)]
            } ?? []
            return try sql.rows(
                """
                SELECT id, projectId, startedAt, stoppedAt FROM activity WHERE projectId = ? \(page)
                ORDER BY startedAt DESC, id DESC LIMIT ?
                """,
                [.integer(projectID)] + cursor + [.integer(Int64(limit))]
            ).map(Self.activityRecord)
        }
    }

    /// Every activity that shares a moment with `start..<end`, and every project's name. Blocks.
    func activities(from start: Date, to end: Date) throws(TrackerError) -> (activities: [ActivityRecord], names: [Int64: String]) {
        try backend.read { sql in
            let activities = try sql.rows(
                """
                SELECT id, projectId, startedAt, stoppedAt FROM activity
                WHERE startedAt < ? AND (stoppedAt IS NULL OR stoppedAt > ?) ORDER BY id
                """,
                [.real(end.timeIntervalSince1970), .real(start.timeIntervalSince1970)]
            ).map(Self.activityRecord)
            let names = try sql.rows("SELECT id, name FROM project", []).map { ($0[0].integer ?? 0, $0[1].text ?? "") }
            return (activities, Dictionary(names, uniquingKeysWith: { first, _ in first }))
        }
    }

    /// A row of `id, projectId, startedAt, stoppedAt`.
    private static func activityRecord(_ row: [SQLValue]) -> ActivityRecord {
        ActivityRecord(
            id: row[0].integer ?? 0, projectID: row[1].integer ?? 0,
            startedAt: Date(timeIntervalSince1970: row[2].real ?? 0),
            stoppedAt: row[3].real.map(Date.init(timeIntervalSince1970:))
        )
    }
}

extension TrackerDatabase {
    /// Every project, by name, each followed by its activities from the oldest: what an export holds. Blocks.
    func exportRows() throws(TrackerError) -> [ExportRow] {
        try backend.read { sql in
            let projects = try sql.rows("SELECT id, name, created FROM project ORDER BY nameKey\(sql.binaryCollation), id", [])
            let activities = Dictionary(grouping: try sql.rows(
                "SELECT id, projectId, startedAt, stoppedAt FROM activity ORDER BY startedAt, id", []
            ).map(Self.activityRecord), by: \.projectID)
            return projects.flatMap { project in
                let id = project[0].integer ?? 0, name = project[1].text ?? ""
                return [ExportRow(project: name, created: project[2].real ?? 0)] + (activities[id] ?? []).map { activity in
                    ExportRow(
                        project: name, startedAt: activity.startedAt.timeIntervalSince1970,
                        stoppedAt: activity.stoppedAt?.timeIntervalSince1970
                    )
                }
            }
        }
    }
}
