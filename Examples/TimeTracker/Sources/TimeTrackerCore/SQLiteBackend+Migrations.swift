import GRDB

/// The SQLite schema and its history. PostgreSQL's is in ``PostgresSchema``: the same tables and columns.
extension SQLiteBackend {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration(DatabaseLocation.firstMigration) { db in
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
        migrator.registerMigration("names compared by Unicode case folding") { db in
            try rekeyNames(in: db)
        }
        migrator.registerMigration("deleted projects kept for undo") { db in
            try db.execute(sql: """
                CREATE TABLE deletedProject (
                    id INTEGER PRIMARY KEY, name TEXT NOT NULL, created DOUBLE NOT NULL, deletedAt DOUBLE NOT NULL
                );
                CREATE TABLE deletedActivity (
                    id INTEGER PRIMARY KEY,
                    projectId INTEGER NOT NULL REFERENCES deletedProject(id) ON DELETE CASCADE,
                    startedAt DOUBLE NOT NULL, stoppedAt DOUBLE
                );
                CREATE INDEX deletedActivity_projectId ON deletedActivity(projectId);
                """)
        }
        migrator.registerMigration("undo history") { db in
            try db.execute(sql: """
                CREATE TABLE undoStep (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, stack TEXT NOT NULL CHECK (stack IN ('undo', 'redo')),
                    name TEXT NOT NULL, change TEXT NOT NULL
                )
                """)
        }
        migrator.registerMigration("action log") { db in
            try db.execute(sql: """
                CREATE TABLE actionLog (id INTEGER PRIMARY KEY AUTOINCREMENT, action TEXT NOT NULL, at DOUBLE NOT NULL)
                """)
        }
        migrator.registerMigration("who made each action") { db in
            try db.execute(sql: """
                ALTER TABLE actionLog ADD COLUMN summary TEXT NOT NULL DEFAULT '';
                ALTER TABLE actionLog ADD COLUMN origin TEXT NOT NULL DEFAULT '';
                """)
        }
        migrator.registerMigration("synced actions applied") { db in
            try db.execute(sql: "CREATE TABLE syncReceipt (id TEXT PRIMARY KEY, logId INTEGER NOT NULL)")
        }
        return migrator
    }

    /// Gives every project the key of ``ProjectName/key(for:)``, which the first schema computed by lowercasing.
    /// Two names that were distinct then may be one now (`straße` and `STRASSE`): the older project keeps the key,
    /// the newer one gets a key no name can have (the key, U+0001, its id) and is reported by
    /// ``TrackerDatabase/nameCollisions()`` until the user deletes one of them. Nothing is merged or dropped.
    private static func rekeyNames(in db: Database) throws {
        let projects = try Row.fetchAll(db, sql: "SELECT id, name FROM project ORDER BY id")
        // Keys are unique: move every one out of the way first, so that the new keys never meet an old one.
        try db.execute(sql: "UPDATE project SET nameKey = char(1) || id")
        var taken = Set<String>()
        for project in projects {
            let id: Int64 = project["id"]
            var key = ProjectName.key(for: project["name"])
            if !taken.insert(key).inserted { key += "\(TrackerDatabase.collisionMark)\(id)" }
            try db.execute(sql: "UPDATE project SET nameKey = ? WHERE id = ?", arguments: [key, id])
        }
    }
}
