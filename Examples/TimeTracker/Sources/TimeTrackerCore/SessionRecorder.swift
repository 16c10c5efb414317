import Foundation
import Statehouse

/// Records every action applied to a tracker's database, by any process, as a `Recording` of ``TrackerRules``:
/// the contents when it started, then each action with its time. `timetrack record` writes one to a file
/// (``SessionFile``), and `timetrack make-test` turns it into a test that replays it.
///
/// It follows the database's action log (see ``TimeTracker/sessionRecorder()``). Each ``catchUp()`` reads the new
/// actions and the contents at one instant, and checks that the actions lead to those contents: a database changed by
/// something that logs no action (a `sqlite3` shell, a restore from a backup) cannot be replayed, and is reported.
public struct SessionRecorder: Sendable {
    private let database: TrackerDatabase
    private var cursor: Int64
    /// What the actions recorded so far lead to.
    private var contents: TrackerContents
    /// The session so far.
    public private(set) var recording: Recording<TrackerContents, LoggedAction>

    /// Reads the contents to start from.
    init(database: TrackerDatabase) async throws {
        self.database = database
        (contents, cursor) = try await Self.betweenWrites(of: database) { sql in
            (try TrackerDatabase.contents(in: sql), try TrackerDatabase.newestLoggedAction(in: sql))
        }
        recording = Recording(initialState: contents)
    }

    /// Adds the actions applied since the last call.
    /// - Returns: How many were added.
    /// - Throws: ``SessionRecorderError`` when the database holds what the actions do not explain, or more actions
    ///   came since the last call than the log keeps: the recording stays as it was, and can be kept.
    @discardableResult
    public mutating func catchUp() async throws -> Int {
        let (logged, newest, actual) = try await Self.betweenWrites(of: database) { [cursor] sql in
            (
                try TrackerDatabase.loggedActions(after: cursor, in: sql), try TrackerDatabase.newestLoggedAction(in: sql),
                try TrackerDatabase.contents(in: sql)
            )
        }
        // The log keeps the last actions only: those between the cursor and what it kept are gone.
        guard newest - TrackerDatabase.actionLogLimit <= cursor else {
            throw SessionRecorderError.fellBehind(afterActions: recording.actions.count)
        }
        var expected = contents
        for entry in logged { _ = TrackerRules.reducer.reduce(&expected, entry.action) }
        guard expected == actual else { throw SessionRecorderError.unexplainedChange(afterActions: recording.actions.count) }
        for entry in logged {
            recording.actions.append(RecordedAction(date: Date(timeIntervalSince1970: entry.action.at), action: entry.action))
        }
        cursor = logged.last?.id ?? cursor
        contents = actual
        return logged.count
    }

    /// Reads in a write transaction, which no writer runs beside: the log and the contents are then of one instant on
    /// both backends (a PostgreSQL read is a statement at a time), and the ids agree with the rows (a PostgreSQL
    /// sequence shows the ids a writer's transaction took before it commits).
    private static func betweenWrites<Result: Sendable>(
        of database: TrackerDatabase, _ body: @escaping @Sendable (any SQLStatements) throws -> Result
    ) async throws -> Result {
        try await database.backend.write(until: .now + .seconds(30), body)
    }
}

/// Why a ``SessionRecorder`` cannot go on.
public enum SessionRecorderError: Error, Equatable, CustomStringConvertible {
    /// The database changed in a way its logged actions do not explain.
    case unexplainedChange(afterActions: Int)
    /// More actions came between two catch-ups than the log keeps.
    case fellBehind(afterActions: Int)

    public var description: String {
        switch self {
        case .unexplainedChange(let count):
            """
            The database changed in a way timetrack's actions do not explain (another program wrote to it; on \
            PostgreSQL, a write that failed after taking an id), after the \(count) actions recorded so far. Those \
            are kept; record again from here to go on.
            """
        case .fellBehind(let count):
            """
            More than \(TrackerDatabase.actionLogLimit) actions came at once, more than the database's log keeps, \
            after the \(count) actions recorded so far. Those are kept; record again from here to go on.
            """
        }
    }
}
