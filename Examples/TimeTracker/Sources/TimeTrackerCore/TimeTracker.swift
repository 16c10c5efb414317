import Foundation
import Statehouse
import StatehouseSQLite

/// The time tracker: a database, and a ``Statehouse/Store`` that publishes its state to every view.
///
/// ```swift
/// let tracker = try TimeTracker(path: TimeTracker.defaultDatabasePath())
/// let subscription = tracker.store.subscribe(\.projects) { projects in render(projects) }
/// try await tracker.perform(.addProject(name: "Writing"))
/// ```
///
/// Views subscribe to ``store`` and re-render when the state changes, whoever changed the database: this process,
/// or another one (seen within milliseconds: a `DatabaseChangeMonitor` watches the database's files).
public final class TimeTracker: Sendable {
    /// The state every view shows; subscribe to it. Change it only through ``perform(_:)``.
    public let store: Store<TrackerState, TrackerStoreAction>
    /// The database file.
    public let path: String
    /// What the user should hear about the database once, when it is opened: for now, projects whose names became
    /// one when names started to be compared as Unicode does (`straße` and `STRASSE`), which stay until one is deleted.
    public let notices: [String]
    private let lockTimeout: Duration
    private let monitor: DatabaseChangeMonitor

    /// Opens (or creates) the database at `path`.
    ///
    /// - Parameters:
    ///   - safetyNet: How often to look for changes made by other processes even when nothing says so (changes are
    ///     watched for as they happen; this catches what watching cannot see, such as a network file system).
    ///   - lockTimeout: How long an action may wait, from when it is performed, for another program to release the
    ///     database; past it, the action fails with ``TrackerError/databaseLocked(waited:)``.
    ///   - now: The clock that dates activities; tests pass their own.
    public init(
        path: String,
        safetyNet: Duration = .seconds(5),
        lockTimeout: Duration = .seconds(5),
        now: @escaping @Sendable () -> Date = { Date() }
    ) throws(TrackerError) {
        self.lockTimeout = lockTimeout
        let database = try TrackerDatabase(path: path, lockTimeout: lockTimeout)
        let reducer = TrackerReducer(database: database, now: now)
        let store = Store(initialState: TrackerState()) {
            (state: inout TrackerState, action: TrackerStoreAction) -> Effect<TrackerStoreAction> in
            reducer.reduce(&state, action)
        }
        self.store = store
        self.path = path
        notices = try database.nameCollisions().map { collision in
            """
            The projects "\(collision.name)" and "\(collision.sameAs)" now count as the same name (case is \
            compared as Unicode does). Both are kept; delete one of them to settle it.
            """
        }
        // The monitor also reports the file (or its -wal or -shm) removed or replaced: then no write goes there
        // any more (see `TrackerDatabase.apply`), and the views are told why.
        do {
            monitor = try DatabaseChangeMonitor(path: path, safetyNet: safetyNet) { [weak store] in
                let action: TrackerStoreAction = database.isStillAtItsPath ? .refresh : .lostDatabase(.databaseGone(path: path))
                store?.dispatch(action)
            }
        } catch {
            throw .database("could not watch \(path): \(TrackerDatabase.reason(error))")
        }
        // Read after the monitor took its baseline, so that no change falls between the two.
        store.dispatch(.loaded(try database.snapshot()))
    }

    /// Applies `action` to the database, and returns once it is written and the new state sent to the store.
    ///
    /// - Returns: The project after the action; `nil` after a delete.
    /// - Throws: ``TrackerError`` when a rule refuses the action (nothing is written then) or the database fails.
    @discardableResult
    public func perform(_ action: TrackerAction) async throws(TrackerError) -> ProjectSummary? {
        let outcome = await withCheckedContinuation { continuation in
            let deadline = ContinuousClock.now + lockTimeout
            store.dispatch(.perform(action, reply: ActionReply(continuation, deadline: deadline)))
        }
        return try outcome.get()
    }

    /// The project a user means by `name` (ignoring case and surrounding white space).
    public func project(named name: String) throws(TrackerError) -> ProjectSummary {
        guard let project = store.state.project(named: name) else {
            throw .projectNotFound("named \"\(name.trimmingCharacters(in: .whitespacesAndNewlines))\"")
        }
        return project
    }

    /// Where the database lives unless told otherwise: `$XDG_DATA_HOME/timetrack/timetrack.sqlite`, or
    /// `~/.local/share/timetrack/timetrack.sqlite` when `XDG_DATA_HOME` is unset or not absolute (as the XDG base
    /// directory specification says).
    public static func defaultDatabasePath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        let dataHome: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            dataHome = xdg
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            dataHome = (home as NSString).appendingPathComponent(".local/share")
        }
        return ((dataHome as NSString).appendingPathComponent("timetrack") as NSString)
            .appendingPathComponent("timetrack.sqlite")
    }
}
