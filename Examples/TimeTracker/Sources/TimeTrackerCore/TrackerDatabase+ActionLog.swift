import Foundation

/// The log of applied actions: each action a tracker applied, with its time, written in the same transaction as its
/// change, so that an action is logged if and only if it happened. ``SessionRecorder`` follows it to record what
/// every process does. It keeps the last ``actionLogLimit`` actions: a recorder reads it at every change, far sooner.
extension TrackerDatabase {
    static let actionLogLimit: Int64 = 1_000

    static func log(_ action: TrackerAction, at now: Double, in sql: any SQLStatements) throws {
        let json = String(decoding: try JSONEncoder().encode(action), as: UTF8.self)
        try sql.execute("INSERT INTO actionLog (action, at) VALUES (?, ?)", [.text(json), .real(now)])
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

    /// The id of the newest logged action, or 0.
    static func newestLoggedAction(in sql: any SQLStatements) throws -> Int64 {
        try sql.value("SELECT MAX(id) FROM actionLog", [])?.integer ?? 0
    }
}
