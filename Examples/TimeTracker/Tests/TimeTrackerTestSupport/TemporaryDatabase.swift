import Foundation
import GRDB
import TimeTrackerCore

/// A database path in a directory of its own, removed afterwards.
public final class TemporaryDatabase: TestDatabase {
    public let directory = FileManager.default.temporaryDirectory.appendingPathComponent("timetrack-\(UUID().uuidString)")
    public var path: String { directory.appendingPathComponent("timetrack.sqlite").path }

    public init() {}

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    public var commandLineArguments: [String] { ["--db", path] }

    public func tracker(clock: TestClock, lockTimeout: Duration, origin: String) async throws -> TimeTracker {
        try TimeTracker(path: path, lockTimeout: lockTimeout, now: { clock.now }, origin: origin)
    }

    /// A connection of another program (an sqlite3 shell) that waits for the tracker's locks, as `.timeout` makes it:
    /// without it, a write that meets the tracker closing a connection (SQLite locks the file while it checkpoints)
    /// would fail at once with "database is locked".
    public func otherProgram() throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.busyMode = .timeout(30)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Counts rows with a connection of the test's own.
    public func count(_ table: String) throws -> Int {
        try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table)") ?? 0 }
    }
}
