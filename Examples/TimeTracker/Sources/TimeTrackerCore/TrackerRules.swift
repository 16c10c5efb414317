import GRDB
import Statehouse

/// timetrack's rules as a reducer: an action, at its time, applied to a database's contents.
///
/// ```swift
/// var contents = TrackerContents()
/// _ = TrackerRules.reducer.reduce(&contents, LoggedAction(.addProject(name: "Writing"), at: 0))
/// ```
///
/// The rules live in the SQL a tracker runs, on SQLite and PostgreSQL alike. Rather than write them a second time in
/// Swift, the reducer runs that very SQL on a copy of the contents in an in-memory SQLite database: a recorded session
/// (``SessionRecorder``) replays through `TestStore` with the app's own rules, and a change to them fails the replay
/// at the step that differs. A fresh database per action is the price: fine for a test or a replay, and never paid on
/// the app's path, which applies actions to its database in place.
public enum TrackerRules {
    /// Applies an action as the tracker would; an action the tracker would refuse leaves the contents as they are (a
    /// refused action is never logged, so a recording has none).
    public static let reducer = Reducer<TrackerContents, LoggedAction> { (contents: inout TrackerContents, logged) in
        if let after = try? applying(logged, to: contents) { contents = after }
    }

    /// The contents after `logged`.
    /// - Throws: The ``TrackerError`` the tracker refuses the action with.
    public static func applying(_ logged: LoggedAction, to contents: TrackerContents) throws -> TrackerContents {
        let copy = try DatabaseQueue()
        try SQLiteBackend.migrator.migrate(copy)
        return try copy.write { db in
            let sql = GRDBStatements(db: db)
            try TrackerDatabase.insert(contents, in: sql)
            _ = try TrackerDatabase.apply(logged.action, at: logged.at, in: sql)
            return try TrackerDatabase.contents(in: sql)
        }
    }
}
