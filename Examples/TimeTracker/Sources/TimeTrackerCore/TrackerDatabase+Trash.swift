import Foundation

/// Deleted projects are kept, with their activities, for ``TrackerDatabase/trashLifetime``, so that a delete can be
/// undone exactly: same id, same name, same activities (a running one runs again). A delete is one click on the page,
/// and deletes hours of records; undoing it is an action like any other, which every open page sees.
extension TrackerDatabase {
    /// How long a deleted project can be restored.
    static let trashLifetime: TimeInterval = 3_600

    /// Copies the project `id` and its activities to the trash, and empties the trash of what is too old to restore
    /// (which ``restore(_:at:in:)`` refuses meanwhile: what is left of it is only waiting for the next delete).
    static func moveToTrash(_ id: Int64, at now: Double, in sql: any SQLStatements) throws {
        try sql.execute("DELETE FROM deletedProject WHERE deletedAt < ?", [.real(now - trashLifetime)])
        try sql.execute(
            "INSERT INTO deletedProject (id, name, created, deletedAt) SELECT id, name, created, ? FROM project WHERE id = ?",
            [.real(now), .integer(id)]
        )
        try sql.execute(
            "INSERT INTO deletedActivity SELECT id, projectId, startedAt, stoppedAt FROM activity WHERE projectId = ?",
            [.integer(id)]
        )
    }

    /// Puts the deleted project `id` back, with its activities, and takes it out of the trash.
    /// - Throws: ``TrackerError/projectNotFound(_:)`` if it is not in the trash (never deleted, restored already, or
    ///   deleted too long ago); ``TrackerError/duplicateName(existing:)`` if its name was taken since.
    static func restore(_ id: Int64, at now: Double, in sql: any SQLStatements) throws -> ProjectSummary? {
        guard let deleted = try sql.rows(
            "SELECT name, created FROM deletedProject WHERE id = ? AND deletedAt >= ?",
            [.integer(id), .real(now - trashLifetime)]
        ).first, let name = deleted[0].text else {
            throw TrackerError.projectNotFound("deleted with id \(id) (a deleted project can be restored for an hour)")
        }
        let key = ProjectName.key(for: name)
        if let existing = try sql.value("SELECT name FROM project WHERE nameKey = ?", [.text(key)])?.text {
            throw TrackerError.duplicateName(existing: existing)
        }
        try sql.execute(
            "INSERT INTO project (id, name, nameKey, created) VALUES (?, ?, ?, ?)",
            [.integer(id), .text(name), .text(key), deleted[1]]
        )
        try sql.execute(
            "INSERT INTO activity SELECT id, projectId, startedAt, stoppedAt FROM deletedActivity WHERE projectId = ?",
            [.integer(id)]
        )
        try sql.execute("DELETE FROM deletedProject WHERE id = ?", [.integer(id)])
        return try summaries(in: sql, projectID: id).first
    }
}
