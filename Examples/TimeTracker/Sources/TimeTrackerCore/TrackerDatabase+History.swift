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
                SELECT id, startedAt, stoppedAt FROM activity WHERE projectId = ? \(page)
                ORDER BY startedAt DESC, id DESC LIMIT ?
                """,
                [.integer(projectID)] + cursor + [.integer(Int64(limit))]
            ).map { row in
                ActivityRecord(
                    id: row[0].integer ?? 0, projectID: projectID,
                    startedAt: Date(timeIntervalSince1970: row[1].real ?? 0),
                    stoppedAt: row[2].real.map(Date.init(timeIntervalSince1970:))
                )
            }
        }
    }
}
