/// An import adds what the file holds and the database does not, as one undo step: a project the database has (its
/// name, ignoring case) is the same project, and an activity it has (same start and stop) is the same activity, so
/// importing a file twice changes nothing. Every row is checked under the rules of the actions it stands for, in
/// the transaction: one row against them, and nothing is written.
extension TrackerDatabase {
    static func importRows(_ rows: [ExportRow], now: Double, in sql: any SQLStatements) throws {
        var changes: [TrackerChange] = []
        // The line of each activity this import added: a later row that overlaps one is told which line, not an id
        // that the refusal rolls back.
        var lines: [Int64: Int] = [:]
        for row in rows {
            do {
                let (projectID, added) = try project(named: row.project, created: row.created ?? now, now: now, in: sql)
                if let added { changes.append(added) }
                if let start = row.startedAt, let change = try importActivity(of: projectID, start, row.stoppedAt, now: now, in: sql) {
                    changes.append(change)
                    if case .activityInserted(let activity) = change { lines[activity.id] = row.line }
                }
            } catch TrackerError.overlappingActivity(let project, let other) where lines[other] != nil {
                let reason = "It overlaps the activity of line \(lines[other] ?? 0) (\"\(project)\")."
                throw TrackerError.importRefused(line: row.line, reason: reason)
            } catch let error as TrackerError {
                throw TrackerError.importRefused(line: row.line, reason: error.description)
            }
        }
        guard !changes.isEmpty else { return }
        let count = changes.count { if case .activityInserted = $0 { true } else { false } }
        try noteUndoable(.batch(changes), named: "Import of \(count) activities", in: sql)
    }

    /// The project with this name ignoring case, or a new one (and the change that made it).
    private static func project(
        named raw: String, created: Double, now: Double, in sql: any SQLStatements
    ) throws -> (id: Int64, added: TrackerChange?) {
        let name = try ProjectName(raw)
        if let id = try sql.value("SELECT id FROM project WHERE nameKey = ?", [.text(name.key)])?.integer {
            return (id, nil)
        }
        guard created >= 0, created <= now else {
            throw TrackerError.invalidActivityTimes("A project cannot be added before 1970 or in the future.")
        }
        let id = try sql.value(
            "INSERT INTO project (name, nameKey, created) VALUES (?, ?, ?) RETURNING id",
            [.text(name.display), .text(name.key), .real(created)]
        )?.integer ?? 0
        return (id, .projectInserted(.init(id: id, name: name.display, created: created), activities: []))
    }

    /// Adds the activity unless the project has it; `nil` when it did.
    private static func importActivity(
        of projectID: Int64, _ start: Double, _ stop: Double?, now: Double, in sql: any SQLStatements
    ) throws -> TrackerChange? {
        // The same within a millisecond: an export keeps microseconds, and two activities of one project that start
        // and stop less than a millisecond apart would overlap.
        func near(_ time: Double) -> [SQLValue] { [.real(time - 0.001), .real(time + 0.001)] }
        let sameStop = stop == nil ? "stoppedAt IS NULL" : "stoppedAt BETWEEN ? AND ?"
        if try sql.value(
            "SELECT id FROM activity WHERE projectId = ? AND startedAt BETWEEN ? AND ? AND \(sameStop)",
            [.integer(projectID)] + near(start) + (stop.map(near) ?? [])
        ) != nil {
            return nil
        }
        try checkTimes(.init(startedAt: start, stoppedAt: stop), now: now)
        try checkNoOverlap(projectID, from: start, to: stop, except: nil, in: sql)
        let id = try sql.value(
            "INSERT INTO activity (projectId, startedAt, stoppedAt) VALUES (?, ?, ?) RETURNING id",
            [.integer(projectID), .real(start), stop.map(SQLValue.real) ?? .null]
        )?.integer ?? 0
        return .activityInserted(.init(id: id, projectID: projectID, startedAt: start, stoppedAt: stop))
    }
}
