import Foundation
import Statehouse

/// The time tracker: a database, and a ``Statehouse/Store`` that publishes its state to every view.
///
/// ```swift
/// let tracker = try TimeTracker(path: TimeTracker.defaultDatabasePath())
/// let subscription = tracker.store.subscribe(\.projects) { projects in render(projects) }
/// try await tracker.perform(.addProject(name: "Writing"))
/// ```
///
/// Views subscribe to ``store`` and re-render when the state changes, whoever changed the database: this process,
/// or another one (seen within milliseconds: on SQLite a `DatabaseChangeMonitor` watches the database's files, on
/// PostgreSQL its `NOTIFY` is pushed; see ``open(postgres:lockTimeout:statementTimeout:now:)``).
public final class TimeTracker: Sendable {
    /// The state every view shows; subscribe to it. Change it only through ``perform(_:)``.
    public let store: Store<TrackerState, TrackerStoreAction>
    /// The database as messages name it: the SQLite file's path, or the PostgreSQL URL without its password.
    public let path: String
    /// What the user should hear about the database once, when it is opened: for now, projects whose names became
    /// one when names started to be compared as Unicode does (`straße` and `STRASSE`), which stay until one is deleted.
    public let notices: [String]
    /// Who this tracker's changes come from, as the others' views show it (``TrackerState/lastChange``).
    public let origin: String
    let lockTimeout: Duration
    let database: TrackerDatabase
    private let now: @Sendable () -> Date
    /// Keeps the backend's watch for other processes' changes going.
    private let watch: any Sendable

    /// Opens (or creates) the SQLite database at `path`.
    ///
    /// - Parameters:
    ///   - safetyNet: How often to look for changes made by other processes even when nothing says so (changes are
    ///     watched for as they happen; this catches what watching cannot see, such as a network file system).
    ///   - lockTimeout: How long an action may wait, from when it is performed, for another program to release the
    ///     database; past it, the action fails with ``TrackerError/databaseLocked(waited:)``.
    ///   - now: The clock that dates activities; tests pass their own.
    ///   - origin: Who this tracker's changes come from, for the others' views (``LastChange``).
    public convenience init(
        path: String,
        safetyNet: Duration = .seconds(5),
        lockTimeout: Duration = .seconds(5),
        now: @escaping @Sendable () -> Date = { Date() },
        origin: String = TimeTracker.processOrigin
    ) throws(TrackerError) {
        let backend = try SQLiteBackend(path: path, safetyNet: safetyNet, lockTimeout: lockTimeout)
        try self.init(backend: backend, lockTimeout: lockTimeout, now: now, origin: origin)
    }

    #if PostgreSQL
    /// Opens the tracker's tables in a PostgreSQL database, making them if the database has none yet, so that
    /// several servers and command lines on several machines share one tracker.
    ///
    /// Every commit to the tables is announced by a trigger with `NOTIFY`, and every tracker on the database listens:
    /// a change made anywhere reaches this tracker's ``store`` within milliseconds. The password, if the URL has one,
    /// never appears in a message; without one, `$PGPASSWORD` is used.
    ///
    /// ```swift
    /// let tracker = try await TimeTracker.open(postgres: "postgres://tracker@db.example:5432/timetrack")
    /// ```
    ///
    /// - Parameters:
    ///   - url: `postgres://user[:password]@host[:port]/database`, optionally with `?sslmode=disable`, `prefer`
    ///     (the default) or `require`.
    ///   - lockTimeout: How long an action may wait, from when it is performed, for another writer's transaction.
    ///   - statementTimeout: How long one statement may take before the server counts as unreachable.
    ///   - now: The clock that dates activities; tests pass their own.
    ///   - origin: Who this tracker's changes come from, for the others' views (``LastChange``).
    /// - Throws: ``TrackerError/unusableDatabase(path:problem:fix:)`` for a URL that cannot be used or a database
    ///   that holds another application's tables; ``TrackerError/database(_:)`` when the server cannot be reached.
    public static func open(
        postgres url: String, lockTimeout: Duration = .seconds(5), statementTimeout: Duration = .seconds(30),
        now: @escaping @Sendable () -> Date = { Date() }, origin: String = TimeTracker.processOrigin
    ) async throws(TrackerError) -> TimeTracker {
        let backend = try await PostgresBackend.open(
            PostgresAddress(url), lockTimeout: lockTimeout, statementTimeout: statementTimeout
        )
        // The first snapshot blocks on PostgreSQL: read it off the cooperative pool.
        let opened = await withCheckedContinuation { (continuation: CheckedContinuation<Result<TimeTracker, TrackerError>, Never>) in
            DispatchQueue.global().async {
                continuation.resume(returning: Result { () throws(TrackerError) in
                    try TimeTracker(backend: backend, lockTimeout: lockTimeout, now: now, origin: origin)
                })
            }
        }
        return try opened.get()
    }
    #endif

    /// Blocks on the database for its first snapshot.
    private init(
        backend: any TrackerBackend, lockTimeout: Duration, now: @escaping @Sendable () -> Date, origin: String
    ) throws(TrackerError) {
        self.lockTimeout = lockTimeout
        self.now = now
        self.origin = origin
        let database = TrackerDatabase(backend: backend, origin: origin)
        self.database = database
        let reducer = TrackerReducer(database: database, now: now)
        let store = Store(initialState: TrackerState()) {
            (state: inout TrackerState, action: TrackerStoreAction) -> Effect<TrackerStoreAction> in
            reducer.reduce(&state, action)
        }
        self.store = store
        path = backend.location
        notices = try database.nameCollisions().map { collision in
            """
            The projects "\(collision.name)" and "\(collision.sameAs)" now count as the same name (case is \
            compared as Unicode does). Both are kept; delete one of them to settle it.
            """
        }
        watch = try backend.watch(
            changed: { [weak store] in store?.dispatch(.refresh) },
            lost: { [weak store] error in store?.dispatch(.lostDatabase(error)) }
        )
        // Read after the watch began, so that no change falls between the two.
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

    /// A recorder of every action applied to the database from now on, by this process or any other.
    public func sessionRecorder() async throws -> SessionRecorder {
        try await SessionRecorder(database: database)
    }

    /// A page of the project's history: `limit` activities (at most 500), newest first, after `last`, the last one
    /// of the page before (none for the first page).
    /// - Throws: ``TrackerError/projectNotFound(_:)``, or a failing database.
    public func activities(
        of projectID: Int64, limit: Int = 50, after last: ActivityRecord? = nil
    ) async throws(TrackerError) -> [ActivityRecord] {
        let database = database
        return try await reading { () throws(TrackerError) in
            try database.activities(of: projectID, limit: min(max(limit, 1), 500), after: last)
        }
    }

    /// Time per project and per day over `days` days from the one that contains `start` in `zone`, running activities
    /// counted until now (the tracker's clock).
    public func report(days: Int, from start: Date, in zone: TimeZone) async throws(TrackerError) -> TimeReport {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        let first = calendar.startOfDay(for: start)
        let end = calendar.date(byAdding: .day, value: max(days, 0), to: first) ?? first
        let (database, now) = (database, now())
        let (activities, names) = try await reading { () throws(TrackerError) in try database.activities(from: first, to: end) }
        return TimeReport(days: days, from: first, in: zone, activities: activities, names: names, now: now)
    }

    /// Every project with its activities, as an export holds them (``TrackerExport`` writes them out).
    public func exportRows() async throws(TrackerError) -> [ExportRow] {
        let database = database
        return try await reading { () throws(TrackerError) in try database.exportRows() }
    }

    /// Runs a read, which blocks, on a queue of its own: never on a thread of the cooperative pool.
    private func reading<Value: Sendable>(
        _ body: @escaping @Sendable () throws(TrackerError) -> Value
    ) async throws(TrackerError) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, TrackerError>, Never>) in
            DispatchQueue.global().async { continuation.resume(returning: Result(catching: body)) }
        }
        return try result.get()
    }

    /// The project a user means by `name` (ignoring case and surrounding white space).
    public func project(named name: String) throws(TrackerError) -> ProjectSummary {
        guard let project = store.state.project(named: name) else {
            throw .projectNotFound("named \"\(name.trimmingCharacters(in: .whitespacesAndNewlines))\"")
        }
        return project
    }

    /// This process, as people name it: `timetrack add (pid 4242 on laptop)`.
    public static let processOrigin: String = {
        let arguments = CommandLine.arguments
        let program = arguments.first.map { ($0 as NSString).lastPathComponent } ?? "timetrack"
        let command = arguments.dropFirst().first.flatMap { $0.hasPrefix("-") ? nil : " " + $0 } ?? ""
        return "\(program)\(command) (pid \(ProcessInfo.processInfo.processIdentifier) on \(ProcessInfo.processInfo.hostName))"
    }()

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
