import Foundation

/// The log of applied actions: each action a tracker applied, with its time, written in the same transaction as its
/// change, so that an action is logged if and only if it happened. ``SessionRecorder`` follows it to record what
/// every process does. It keeps the last ``actionLogLimit`` actions: a recorder reads it at every change, far sooner.
extension TrackerDatabase {
    static let actionLogLimit: Int64 = 1_000

    /// Logs `action`, made by `origin`, with what it changed for a person to read (``LastChange``).
    static func log(
        _ action: TrackerAction, at now: Double, summary: String, origin: String, in sql: any SQLStatements
    ) throws {
        let json = String(decoding: try JSONEncoder().encode(action), as: UTF8.self)
        try sql.execute(
            "INSERT INTO actionLog (action, at, summary, origin) VALUES (?, ?, ?, ?)",
            [.text(json), .real(now), .text(summary), .text(origin)]
        )
        try sql.execute(
            "DELETE FROM actionLog WHERE id <= (SELECT MAX(id) FROM actionLog) - ?", [.integer(actionLogLimit)]
        )
    }

    /// The actions logged after the one whose id is `cursor`, oldest first, each with its id.
    static func loggedActions(after cursor: Int64, in sql: any SQLStatements) throws -> [(id: Int64, action: LoggedAction)] {
        try sql.rows("SELECT id, action, at FROM actionLog WHERE id > ? ORDER BY id", [.integer(cursor)]).map { row in
            let action = try JSONDecoder().decode(TrackerAction.self, from: Data((row[1].text ?? "").utf8))
            return (row[0].integer ?? 0, LoggedAction(action, at: row[2].real ?? 0))
        }
    }

    /// The undo step an action made, as a person reads it: "Add Writing", "Undo Add Writing"; empty when it made none
    /// (a rename to the same name). `before` is the newest step's id before the action.
    static func summary(of action: TrackerAction, after before: Int64, in sql: any SQLStatements) throws -> String {
        guard let step = try sql.rows(
            "SELECT name FROM undoStep WHERE id > ? ORDER BY id DESC LIMIT 1", [.integer(before)]
        ).first?.first?.text else { return "" }
        switch action {
        case .undo: return "Undo \(step)"
        case .redo: return "Redo \(step)"
        default: return step
        }
    }

    static func newestUndoStep(in sql: any SQLStatements) throws -> Int64 {
        try sql.value("SELECT MAX(id) FROM undoStep", [])?.integer ?? 0
    }

    /// The newest action that changed something.
    static func lastChange(in sql: any SQLStatements) throws -> LastChange? {
        try sql.rows(
            "SELECT summary, origin, at FROM actionLog WHERE summary <> '' ORDER BY id DESC LIMIT 1", []
        ).first.map { row in
            LastChange(summary: row[0].text ?? "", origin: row[1].text ?? "", at: Date(timeIntervalSince1970: row[2].real ?? 0))
        }
    }

    /// The id of the newest logged action, or 0.
    static func newestLoggedAction(in sql: any SQLStatements) throws -> Int64 {
        try sql.value("SELECT MAX(id) FROM actionLog", [])?.integer ?? 0
    }
}
