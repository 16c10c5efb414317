import ArgumentParser
import TimeTrackerCore

/// `--db PATH`, which every command takes.
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

    /// Opens the tracker, and tells the user on standard error what they should know about the database.
    func openTracker() throws -> TimeTracker {
        let tracker = try TimeTracker(path: path ?? TimeTracker.defaultDatabasePath())
        for notice in tracker.notices { StandardOutput.warn(notice) }
        return tracker
    }
}
