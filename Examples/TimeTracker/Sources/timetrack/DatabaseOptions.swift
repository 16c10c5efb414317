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

    func openTracker() throws -> TimeTracker {
        try TimeTracker(path: path ?? TimeTracker.defaultDatabasePath())
    }
}
