import Foundation
import GRDB
import StatehouseSQLite

/// The SQLite database every process shares: the single source of truth.
///
/// WAL mode, so that readers never wait for a writer; foreign keys, so that deleting a project deletes its activities;
/// the schema made by a migrator; the file readable by its owner only. A write that finds the database locked by
/// another process waits for it until its ``WriteDeadline``, then fails with ``TrackerError/databaseLocked(waited:)``.
final class TrackerDatabase: Sendable {
    let path: String
    let pool: DatabasePool
    let writeDeadline: WriteDeadline
    /// The file opened, and its write-ahead log and shared index (`-wal`, `-shm`, where SQLite keeps them: beside
    /// the file a symbolic link points to): writes stop once any of them is another file, or none.
    let identity: FileIdentity
    let journal: [(path: String, identity: FileIdentity)]

    init(path: String, lockTimeout: Duration) throws(TrackerError) {
        self.path = path
        writeDeadline = WriteDeadline(timeout: lockTimeout)
        var configuration = Configuration()
        configuration.busyMode = writeDeadline.busyMode
        try DatabaseLocation.checkBeforeOpening(path)
        try DatabaseLocation.checkOwner(path)
        do {
            pool = try SharedDatabase.openPool(at: path, configuration: configuration)
            try pool.writeWithoutTransaction(DatabaseLocation.claim)
            try Self.migrator.migrate(pool)
        } catch {
            throw DatabaseLocation.openingFailure(error, path: path)
        }
        guard let identity = FileIdentity(path: path) else { throw .databaseGone(path: path) }
        self.identity = identity
        // SQLite keeps both while any connection is open, and this pool keeps its own open: the same files until the
        // tracker closes. A removed log takes the commits it holds with it; a removed index lets two processes keep
        // two indexes of one log, and write over each other's commits.
        let realPath = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        journal = ["-wal", "-shm"].compactMap { suffix in
            FileIdentity(path: realPath + suffix).map { (realPath + suffix, $0) }
        }
    }

    /// What went wrong, in words, without the SQL that was running (a user cannot act on it, and it tells an
    /// attacker about the schema).
    static func reason(_ error: any Error) -> String {
        guard let error = error as? DatabaseError else { return String(describing: error) }
        return error.message ?? "SQLite error \(error.resultCode.rawValue)"
    }

    private static var migrator: DatabaseMigrator {
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
            try createTrash(in: db)
        }
        return migrator
    }

    /// Gives every project the key of ``ProjectName/key(for:)``, which the first schema computed by lowercasing.
    /// Two names that were distinct then may be one now (`straße` and `STRASSE`): the older project keeps the key,
    /// the newer one gets a key no name can have (the key, U+0001, its id) and is reported by ``nameCollisions()``
    /// until the user deletes one of them. Nothing is merged or dropped.
    private static func rekeyNames(in db: Database) throws {
        let projects = try Row.fetchAll(db, sql: "SELECT id, name FROM project ORDER BY id")
        // Keys are unique: move every one out of the way first, so that the new keys never meet an old one.
        try db.execute(sql: "UPDATE project SET nameKey = char(1) || id")
        var taken = Set<String>()
        for project in projects {
            let id: Int64 = project["id"]
            var key = ProjectName.key(for: project["name"])
            if !taken.insert(key).inserted { key += "\(collisionMark)\(id)" }
            try db.execute(sql: "UPDATE project SET nameKey = ? WHERE id = ?", arguments: [key, id])
        }
    }

    /// Marks the key of a project whose name collided with an older one's: a control character, which no name has.
    private static let collisionMark: Character = "\u{1}"

    /// The projects whose names became one with an older project's when the comparison changed, with that name.
    func nameCollisions() throws(TrackerError) -> [(name: String, sameAs: String)] {
        let projects: [(name: String, key: String)]
        do {
            projects = try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT name, nameKey FROM project ORDER BY id").map { ($0["name"], $0["nameKey"]) }
            }
        } catch {
            throw .database("could not read \(path): \(Self.reason(error))")
        }
        let holders = Dictionary(projects.map { ($0.key, $0.name) }, uniquingKeysWith: { first, _ in first })
        return projects.compactMap { project in
            guard let mark = project.key.firstIndex(of: Self.collisionMark) else { return nil }
            return holders[String(project.key[..<mark])].map { (project.name, $0) }
        }
    }

    /// Deleting the project that holds a key gives it to the oldest project whose name collided with it, if any.
    static func passOnNameKey(of id: Int64, in db: Database) throws {
        guard let key = try String.fetchOne(db, sql: "SELECT nameKey FROM project WHERE id = ?", arguments: [id]),
              !key.contains(collisionMark)
        else { return }
        // The collided keys are the key, the mark (U+0001), an id: in binary order, between key + U+0001 and key + U+0002.
        guard let heir = try Int64.fetchOne(
            db, sql: "SELECT id FROM project WHERE nameKey >= ? AND nameKey < ? ORDER BY id LIMIT 1",
            arguments: [key + "\u{1}", key + "\u{2}"]
        ) else { return }
        try db.execute(sql: "DELETE FROM project WHERE id = ?", arguments: [id])
        try db.execute(sql: "UPDATE project SET nameKey = ? WHERE id = ?", arguments: [key, heir])
    }
}

extension TrackerDatabase {
    /// Whether `path` still names the file this database opened, and its log and index the ones it opened.
    var isStillAtItsPath: Bool {
        FileIdentity(path: path) == identity && journal.allSatisfy { FileIdentity(path: $0.path) == $0.identity }
    }
}
