import Foundation

extension TrackerDatabase {
    /// One query: each project with the sum of its finished activities and the start of its running one.
    static func summaries(in sql: any SQLStatements, projectID: Int64? = nil) throws -> [ProjectSummary] {
        let filter = projectID == nil ? "" : "WHERE project.id = ?"
        let rows = try sql.rows(
            """
            SELECT project.id, project.name, project.created,
                   COALESCE(SUM(activity.stoppedAt - activity.startedAt), 0),
                   MAX(CASE WHEN activity.stoppedAt IS NULL THEN activity.startedAt END)
            FROM project LEFT JOIN activity ON activity.projectId = project.id
            \(filter)
            GROUP BY project.id
            ORDER BY project.nameKey\(sql.binaryCollation), project.id
            """,
            projectID.map { [.integer($0)] } ?? []
        )
        return rows.map { row in
            ProjectSummary(
                id: row[0].integer ?? 0,
                name: row[1].text ?? "",
                created: Date(timeIntervalSince1970: row[2].real ?? 0),
                elapsedSeconds: row[3].real ?? 0,
                runningSince: row[4].real.map(Date.init(timeIntervalSince1970:))
            )
        }
    }
}
