import Foundation

/// The database every process shares, the single source of truth, on either backend: the actions, the snapshot and
/// the rules, written once.
final class TrackerDatabase: Sendable {
    let backend: any TrackerBackend
    /// Who applies the actions, as the action log keeps it (``LastChange/origin``).
    let origin: String

    init(backend: any TrackerBackend, origin: String) {
        self.backend = backend
        self.origin = origin
    }

    /// Applies `action` as one transaction that no other writer runs beside, so that its checks and its writes see
    /// the same database: all of it or nothing.
    ///
    /// - Parameters:
    ///   - clock: Dates the action, read once the write lock is held.
    ///   - deadline: The latest time to have the lock by; past it, the action is refused, nothing written.
    /// - Returns: The project after the action; `nil` after a delete.
    func apply(
        _ action: TrackerAction, clock: @escaping @Sendable () -> Date, until deadline: ContinuousClock.Instant
    ) async throws(TrackerError) -> ProjectSummary? {
        do {
            return try await backend.write(until: deadline) { [origin] sql in
                try Self.applyAndLog(action, at: clock().timeIntervalSince1970, origin: origin, in: sql)
            }
        } catch let error as TrackerError {
            throw error
        } catch let error as UniqueViolation {
            // Another process added the same name between our check and our insert (writers are serialized, so
            // only a writer that is not timetrack can do that).
            guard case .addProject(let name) = action else { throw .database(error.reason) }
            throw .duplicateName(existing: name.trimmingCharacters(in: .whitespacesAndNewlines))
        } catch {
            throw .database(String(describing: error))
        }
    }

    /// Applies `action` at `now` and logs it, made by `origin`, in the caller's transaction.
    static func applyAndLog(
        _ action: TrackerAction, at now: Double, origin: String, in sql: any SQLStatements
    ) throws -> ProjectSummary? {
        let newestStep = try newestUndoStep(in: sql)
        let project = try apply(action, at: now, in: sql)
        let summary = try summary(of: action, after: newestStep, in: sql)
        try log(action, at: now, summary: summary, origin: origin, in: sql)
        return project
    }

    /// Reads the whole state at once, so that it is consistent. Blocks: call it off the cooperative pool.
    func snapshot() throws(TrackerError) -> TrackerState {
        try backend.read { sql in
            let (undo, redo) = try Self.undoAvailability(in: sql)
            var state = TrackerState(projects: try Self.summaries(in: sql), undoName: undo, redoName: redo)
            state.lastChange = try Self.lastChange(in: sql)
            return state
        }
    }

    /// The projects whose names became one with an older project's when the comparison changed, with that name
    /// (see ``SQLiteBackend``'s migration; a PostgreSQL database never had the older comparison).
    func nameCollisions() throws(TrackerError) -> [(name: String, sameAs: String)] {
        let projects = try backend.read { sql in
            try sql.rows("SELECT name, nameKey FROM project ORDER BY id", []).map { row in
                (name: row[0].text ?? "", key: row[1].text ?? "")
            }
        }
        let holders = Dictionary(projects.map { ($0.key, $0.name) }, uniquingKeysWith: { first, _ in first })
        return projects.compactMap { project in
            guard let mark = project.key.firstIndex(of: Self.collisionMark) else { return nil }
            return holders[String(project.key[..<mark])].map { (project.name, $0) }
        }
    }

    /// Marks the key of a project whose name collided with an older one's: a control character, which no name has.
    static let collisionMark: Character = "\u{1}"
}
