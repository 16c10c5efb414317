import Foundation
import GRDB

extension TrackerDatabase {
    /// Reads the whole state in one read transaction, so that it is consistent.
    func snapshot() throws(TrackerError) -> TrackerState {
        do {
            return try pool.read { db in TrackerState(projects: try Self.summaries(in: db)) }
        } catch {
            throw .database("could not read \(path): \(error)")
        }
    }

    /// One query: each project with the sum of its finished activities and the start of its running one.
    static func summaries(in db: Database, projectID: Int64? = nil) throws -> [ProjectSummary] {
        let filter = projectID == nil ? "" : "WHERE project.id = ?"
        let rows = try Row.fetchAll(
            db,
            sql: """
                SELECT project.id, project.name, project.created,
                       COALESCE(SUM(activity.stoppedAt - activity.startedAt), 0) AS elapsed,
                       MAX(CASE WHEN activity.stoppedAt IS NULL THEN activity.startedAt END) AS runningSince
                FROM project LEFT JOIN activity ON activity.projectId = project.id
                \(filter)
                GROUP BY project.id
                ORDER BY project.nameKey, project.id
                """,
            arguments: projectID.map { [$0] } ?? []
        )
        return rows.map { row in
            ProjectSummary(
                id: row["id"],
                name: row["name"],
                created: Date(timeIntervalSince1970: row["created"]),
                elapsedSeconds: row["elapsed"],
                runningSince: (row["runningSince"] as Double?).map(Date.init(timeIntervalSince1970:))
            )
        }
    }
}
