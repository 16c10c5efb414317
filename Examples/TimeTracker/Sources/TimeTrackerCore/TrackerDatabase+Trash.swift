import Foundation
import GRDB

/// Deleted projects are kept, with their activities, for ``TrackerDatabase/trashLifetime``, so that a delete can be
/// undone exactly: same id, same name, same activities (a running one runs again). A delete is one click on the page,
/// and deletes hours of records; undoing it is an action like any other, which every open page sees.
extension TrackerDatabase {
    /// How long a deleted project can be restored.
    static let trashLifetime: TimeInterval = 3_600

    static func createTrash(in db: Database) throws {
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

    /// Copies the project `id` and its activities to the trash, and empties the trash of what is too old to restore
    /// (which ``restore(_:at:in:)`` refuses meanwhile: what is left of it is only waiting for the next delete).
    static func moveToTrash(_ id: Int64, at now: Double, in db: Database) throws {
        try db.execute(sql: "DELETE FROM deletedProject WHERE deletedAt < ?", arguments: [now - trashLifetime])
        try db.execute(
            sql: "INSERT INTO deletedProject (id, name, created, deletedAt) SELECT id, name, created, ? FROM project WHERE id = ?",
            arguments: [now, id]
        )
        try db.execute(
            sql: "INSERT INTO deletedActivity SELECT id, projectId, startedAt, stoppedAt FROM activity WHERE projectId = ?",
            arguments: [id]
        )
    }

    /// Puts the deleted project `id` back, with its activities, and takes it out of the trash.
    /// - Throws: ``TrackerError/projectNotFound(_:)`` if it is not in the trash (never deleted, restored already, or
    ///   deleted too long ago); ``TrackerError/duplicateName(existing:)`` if its name was taken since.
    static func restore(_ id: Int64, at now: Double, in db: Database) throws -> ProjectSummary? {
        guard let deleted = try Row.fetchOne(
            db, sql: "SELECT name, created FROM deletedProject WHERE id = ? AND deletedAt >= ?",
            arguments: [id, now - trashLifetime]
        ) else {
            throw TrackerError.projectNotFound("deleted with id \(id) (a deleted project can be restored for an hour)")
        }
        let name: String = deleted["name"]
        let key = ProjectName.key(for: name)
        if let existing = try String.fetchOne(db, sql: "SELECT name FROM project WHERE nameKey = ?", arguments: [key]) {
            throw TrackerError.duplicateName(existing: existing)
        }
        try db.execute(
            sql: "INSERT INTO project (id, name, nameKey, created) VALUES (?, ?, ?, ?)",
            arguments: [id, name, key, deleted["created"]]
        )
        try db.execute(
            sql: "INSERT INTO activity SELECT id, projectId, startedAt, stoppedAt FROM deletedActivity WHERE projectId = ?",
            arguments: [id]
        )
        try db.execute(sql: "DELETE FROM deletedProject WHERE id = ?", arguments: [id])
        return try summaries(in: db, projectID: id).first
    }
}
