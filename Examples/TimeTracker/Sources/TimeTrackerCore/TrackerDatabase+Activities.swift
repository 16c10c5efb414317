/// Corrections: an activity added by hand, edited or deleted. A project's activities never overlap, never lie in the
/// future and stop after they start, whoever made them; each correction is one undo step.
extension TrackerDatabase {
    static func addActivity(
        to projectID: Int64, startedAt: Double, stoppedAt: Double, now: Double, in sql: any SQLStatements
    ) throws -> ProjectSummary? {
        let project = try name(of: projectID, in: sql)
        try checkTimes(.init(startedAt: startedAt, stoppedAt: stoppedAt), now: now)
        try checkNoOverlap(projectID, from: startedAt, to: stoppedAt, except: nil, in: sql)
        let id = try sql.value(
            "INSERT INTO activity (projectId, startedAt, stoppedAt) VALUES (?, ?, ?) RETURNING id",
            [.integer(projectID), .real(startedAt), .real(stoppedAt)]
        )?.integer ?? 0
        let added = TrackerChange.Activity(id: id, projectID: projectID, startedAt: startedAt, stoppedAt: stoppedAt)
        try noteUndoable(.activityInserted(added), named: "Add activity to \(project)", in: sql)
        return try summary(of: projectID, in: sql)
    }

    static func editActivity(
        _ id: Int64, to times: TrackerChange.Times, now: Double, in sql: any SQLStatements
    ) throws -> ProjectSummary? {
        guard let activity = try activity(id, in: sql) else { throw TrackerError.activityNotFound(id) }
        if activity.stoppedAt == nil, times.stoppedAt != nil {
            throw TrackerError.invalidActivityTimes("This activity is running: stop it first, then change its stop.")
        }
        if activity.stoppedAt != nil, times.stoppedAt == nil {
            throw TrackerError.invalidActivityTimes("A finished activity needs a stop.")
        }
        try checkTimes(times, now: now)
        try checkNoOverlap(activity.projectID, from: times.startedAt, to: times.stoppedAt, except: id, in: sql)
        let before = TrackerChange.Times(startedAt: activity.startedAt, stoppedAt: activity.stoppedAt)
        guard times != before else { return try summary(of: activity.projectID, in: sql) }
        try setTimes(of: id, to: times, in: sql)
        let project = try name(of: activity.projectID, in: sql)
        try noteUndoable(.activityTimesChanged(id: id, from: before, to: times), named: "Edit activity of \(project)", in: sql)
        return try summary(of: activity.projectID, in: sql)
    }

    static func deleteActivity(_ id: Int64, in sql: any SQLStatements) throws -> ProjectSummary? {
        guard let activity = try activity(id, in: sql) else { throw TrackerError.activityNotFound(id) }
        try sql.execute("DELETE FROM activity WHERE id = ?", [.integer(id)])
        let project = try name(of: activity.projectID, in: sql)
        try noteUndoable(.activityRemoved(activity), named: "Delete activity of \(project)", in: sql)
        return try summary(of: activity.projectID, in: sql)
    }

    static func setTimes(of id: Int64, to times: TrackerChange.Times, in sql: any SQLStatements) throws {
        try sql.execute(
            "UPDATE activity SET startedAt = ?, stoppedAt = ? WHERE id = ?",
            [.real(times.startedAt), times.stoppedAt.map(SQLValue.real) ?? .null, .integer(id)]
        )
    }

    /// A running activity (no stop) runs until now: it must have started by then.
    static func checkTimes(_ times: TrackerChange.Times, now: Double) throws {
        // Before 1970 is no one's time tracking, and times that far off would not fit the views' whole seconds.
        guard times.startedAt >= 0 else {
            throw TrackerError.invalidActivityTimes("An activity cannot start before 1970.")
        }
        guard times.startedAt <= now, (times.stoppedAt ?? now) <= now else {
            throw TrackerError.invalidActivityTimes("An activity cannot start or stop in the future.")
        }
        if let stop = times.stoppedAt, stop <= times.startedAt {
            throw TrackerError.invalidActivityTimes("An activity stops after it starts.")
        }
    }

    /// Refuses an activity from `start` to `stop` (running on, without one) that shares a moment with another of the
    /// project's activities but `except`; activities that only touch (one stops as the next starts) do not overlap.
    static func checkNoOverlap(
        _ projectID: Int64, from start: Double, to stop: Double?, except: Int64?, in sql: any SQLStatements
    ) throws {
        // Without a stop, the clause on the start goes: PostgreSQL cannot type a parameter that is only NULL.
        let endsBefore = stop == nil ? "" : "AND startedAt < ?"
        guard let other = try sql.value(
            """
            SELECT id FROM activity WHERE projectId = ? AND id <> ? \(endsBefore)
            AND (stoppedAt IS NULL OR stoppedAt > ?) ORDER BY startedAt LIMIT 1
            """,
            [.integer(projectID), .integer(except ?? 0)] + (stop.map { [SQLValue.real($0)] } ?? []) + [.real(start)]
        )?.integer else { return }
        throw TrackerError.overlappingActivity(project: try name(of: projectID, in: sql), other: other)
    }
}
