import ArgumentParser
import TimeTrackerCore

/// `--db PATH` or `--database URL`, which every command takes.
struct DatabaseOptions: ParsableArguments {
    @Option(
        name: .customLong("db"),
        help: ArgumentHelp(
            "The database file, created if missing.",
            discussion: "Default: $XDG_DATA_HOME/timetrack/timetrack.sqlite, or ~/.local/share/timetrack/timetrack.sqlite.",
            valueName: "path"
        )
    )
    var path: String?

    @Option(
        name: .customLong("database"),
        help: ArgumentHelp(
            "A PostgreSQL database to use instead of a file, shared by every server and command pointed at it.",
            discussion: """
                postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]; without a password \
                in the URL, $PGPASSWORD is used. The tables are made if the database has none.
                """,
            valueName: "url"
        )
    )
    var url: String?

    @Option(
        name: .customLong("lock-timeout"),
        help: ArgumentHelp(
            "How many seconds a change may wait for another program to release the database.", valueName: "seconds"
        )
    )
    var lockTimeout: Double = 5

    func validate() throws {
        guard path == nil || url == nil else {
            throw ValidationError("Give either --db (a file) or --database (a PostgreSQL URL), not both.")
        }
        guard (0...86_400).contains(lockTimeout) else {
            throw ValidationError("A lock timeout is a number of seconds from 0 to 86400 (a day).")
        }
    }

    /// Opens the tracker, and tells the user on standard error what they should know about the database.
    func openTracker() async throws -> TimeTracker {
        let tracker: TimeTracker
        if let url {
            #if PostgreSQL
            tracker = try await TimeTracker.open(postgres: url, lockTimeout: .seconds(lockTimeout))
            #else
            _ = url
            throw BuiltWithoutPostgreSQL()
            #endif
        } else {
            tracker = try TimeTracker(path: path ?? TimeTracker.defaultDatabasePath(), lockTimeout: .seconds(lockTimeout))
        }
        for notice in tracker.notices { StandardOutput.warn(notice) }
        return tracker
    }
}

/// `--database` given to a timetrack built without the PostgreSQL trait.
struct BuiltWithoutPostgreSQL: Error, CustomStringConvertible {
    var description: String {
        """
        This timetrack was built without PostgreSQL. Build it with the PostgreSQL trait: \
        TIMETRACK_TRAITS=PostgreSQL scripts/timetrack ..., or swift build --traits PostgreSQL.
        """
    }
}
