import Foundation
import GRDB

extension TrackerDatabase {
    /// Applies `action` as one immediate transaction: all of it or nothing, and no other process writes between its
    /// checks and its writes (an immediate transaction takes the write lock before reading). Runs on GRDB's writer
    /// queue: the task that awaits it leaves its thread to others meanwhile, so a database locked by another program
    /// holds up the writes, never the requests that only read.
    ///
    /// - Parameters:
    ///   - clock: Dates the action, read once the write lock is held.
    ///   - deadline: The latest time to have the lock by; past it, the action is refused, nothing written.
    /// - Returns: The project after the action; `nil` after a delete.
    func apply(
        _ action: TrackerAction, clock: @escaping @Sendable () -> Date, until deadline: ContinuousClock.Instant
    ) async throws(TrackerError) -> ProjectSummary? {
        do {
            // The deadline bounds only the waits for another program's lock: a write that finds the database free
            // proceeds however long it waited in line, and a lock timeout of 0 means "never wait", not "never write".
            return try await pool.writeWithoutTransaction { [writeDeadline] db in
                return try writeDeadline.applying(deadline) { [self] in
                    var project: ProjectSummary?
                    try db.inTransaction(.immediate) {
                        project = try Self.apply(action, at: clock().timeIntervalSince1970, in: db)
                        // Under the write lock, just before committing: a file removed or replaced meanwhile gets
                        // nothing, so no write is confirmed into a file nobody will open again.
                        guard isStillAtItsPath else { throw TrackerError.databaseGone(path: path) }
                        return .commit
                    }
                    return project
                }
            }
        } catch let error as TrackerError {
            throw error
        } catch let error as DatabaseError where error.resultCode == .SQLITE_BUSY {
            throw .databaseLocked(waited: writeDeadline.timeout)
        } catch let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE {
            // Another process added the same name between our check and our insert.
            guard case .addProject(let name) = action else { throw .database(Self.reason(error)) }
            throw .duplicateName(existing: name.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw .database(Self.reason(error))
        }
    }

    private static func apply(_ action: TrackerAction, at now: Double, in db: Database) throws -> ProjectSummary? {
        switch action {
        case .addProject(let raw):
            let name = try ProjectName(raw)
            if let existing = try String.fetchOne(
                db, sql: "SELECT name FROM project WHERE nameKey = ?", arguments: [name.key]
            ) {
                throw TrackerError.duplicateName(existing: existing)
            }
            try db.execute(
                sql: "INSERT INTO project (name, nameKey, created) VALUES (?, ?, ?)",
                arguments: [name.display, name.key, now]
            )
            return try summary(of: db.lastInsertedRowID, in: db)
        case .deleteProject(let id):
            _ = try name(of: id, in: db)
            try moveToTrash(id, at: now, in: db)
            try passOnNameKey(of: id, in: db)
            try db.execute(sql: "DELETE FROM project WHERE id = ?", arguments: [id])
            return nil
        case .restoreProject(let id):
            return try restore(id, at: now, in: db)
        case .startActivity(let id):
            let project = try name(of: id, in: db)
            let running = try Bool.fetchOne(
                db, sql: "SELECT EXISTS (SELECT 1 FROM activity WHERE projectId = ? AND stoppedAt IS NULL)",
                arguments: [id]
            )
            if running == true { throw TrackerError.alreadyRunning(project: project) }
            // A clock set back (an NTP step, a laptop resuming) must not start an activity inside the last one,
            // which would count the same time twice: it starts where the last one ended instead.
            try db.execute(
                sql: """
                    INSERT INTO activity (projectId, startedAt)
                    VALUES (?, MAX(?, COALESCE((SELECT MAX(stoppedAt) FROM activity WHERE projectId = ?), ?)))
                    """,
                arguments: [id, now, id, now]
            )
            return try summary(of: id, in: db)
        case .stopActivity(let id):
            let project = try name(of: id, in: db)
            // A clock set back since the start must not make a negative duration.
            try db.execute(
                sql: "UPDATE activity SET stoppedAt = MAX(?, startedAt) WHERE projectId = ? AND stoppedAt IS NULL",
                arguments: [now, id]
            )
            if db.changesCount == 0 { throw TrackerError.notRunning(project: project) }
            return try summary(of: id, in: db)
        }
    }

    private static func name(of id: Int64, in db: Database) throws -> String {
        guard let name = try String.fetchOne(db, sql: "SELECT name FROM project WHERE id = ?", arguments: [id]) else {
            throw TrackerError.projectNotFound("with id \(id)")
        }
        return name
    }

    private static func summary(of id: Int64, in db: Database) throws -> ProjectSummary? {
        try summaries(in: db, projectID: id).first
    }
}
