import Foundation
import GRDB
import StatehouseSQLite

/// The SQLite database every process shares: the single source of truth.
///
/// WAL mode, so that readers never wait for a writer; foreign keys, so that deleting a project deletes its activities;
/// the schema made by a migrator; the file readable by its owner only. A connection that finds the database locked by
/// another process waits up to 10 seconds instead of failing.
final class TrackerDatabase: Sendable {
    let path: String
    let pool: DatabasePool

    init(path: String) throws(TrackerError) {
        self.path = path
        do {
            pool = try SharedDatabase.openPool(at: path)
            try Self.migrator.migrate(pool)
        } catch {
            throw .database("could not open \(path): \(error)")
        }
    }

    private static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("projects and activities") { db in
            try db.create(table: "project") { table in
                table.autoIncrementedPrimaryKey("id")
                table.column("name", .text).notNull()
                // The lowercased name: uniqueness ignoring case holds even when two processes add at once.
                table.column("nameKey", .text).notNull().unique()
                table.column("created", .double).notNull()
            }
            try db.create(table: "activity") { table in
                table.autoIncrementedPrimaryKey("id")
                table.belongsTo("project", onDelete: .cascade).notNull()
                table.column("startedAt", .double).notNull()
                table.column("stoppedAt", .double)
                table.check(sql: "stoppedAt IS NULL OR stoppedAt >= startedAt")
            }
            // At most one running activity per project, whatever the writers do.
            try db.execute(sql: "CREATE UNIQUE INDEX activity_running ON activity(projectId) WHERE stoppedAt IS NULL")
        }
        return migrator
    }
}
