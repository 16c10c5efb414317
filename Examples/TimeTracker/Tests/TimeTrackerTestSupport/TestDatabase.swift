import TimeTrackerCore

/// A fresh database for one test, on either backend; removed afterwards.
public protocol TestDatabase: Sendable {
    /// What a `timetrack` command is given to use this database (`--db PATH`, `--database URL`).
    var commandLineArguments: [String] { get }

    /// A tracker on this database, dating activities by `clock`, its changes made by `origin`.
    func tracker(clock: TestClock, lockTimeout: Duration, origin: String) async throws -> TimeTracker

    /// Counts the rows of `table`, with a connection of the test's own.
    func count(_ table: String) throws -> Int
}

/// The backends a test can run on.
public enum TestBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    #if PostgreSQL
    case postgres
    #endif

    public var description: String { rawValue }

    /// Why this backend cannot be tested here, or `nil` if it can.
    public var unavailableReason: String? {
        #if PostgreSQL
        self == .postgres && !TemporaryPostgresDatabase.isInstalled
            ? "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)" : nil
        #else
        nil
        #endif
    }

    /// A new, empty database.
    public func makeDatabase() throws -> any TestDatabase {
        switch self {
        case .sqlite: TemporaryDatabase()
        #if PostgreSQL
        case .postgres: try TemporaryPostgresDatabase()
        #endif
        }
    }
}

extension TestDatabase {
    public func tracker(
        clock: TestClock = TestClock(), lockTimeout: Duration = .seconds(5), origin: String = TimeTracker.processOrigin
    ) async throws -> TimeTracker {
        try await tracker(clock: clock, lockTimeout: lockTimeout, origin: origin)
    }
}
