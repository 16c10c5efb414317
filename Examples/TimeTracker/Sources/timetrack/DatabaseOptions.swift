import ArgumentParser
import Foundation
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
        name: .customLong("remote"),
        help: ArgumentHelp(
            "A timetrack server to follow, offline-first (the address `timetrack serve` printed, without #token).",
            discussion: """
                The command works on a copy of the server's tracker at --db (default: one per server, beside the \
                default database), which takes the server's state first; its changes are sent to the server, or wait \
                in the copy's outbox while the server cannot be reached (`timetrack sync` sends them). The server's \
                access token comes from --token-file, or else $TIMETRACK_TOKEN.
                """,
            valueName: "url"
        )
    )
    var remote: String?

    @Option(
        name: .customLong("token-file"),
        help: ArgumentHelp(
            "A file holding the access token: the server's, with --remote; for serve, the one to require.",
            discussion: "serve makes it, owner-only and with a new token, if it is missing.",
            valueName: "path"
        )
    )
    var tokenFile: String?

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
        if remote != nil {
            guard url == nil else {
                throw ValidationError("--remote keeps its copy in a file (--db), not in PostgreSQL (--database).")
            }
            _ = try remoteServer()
        }
        guard (0...86_400).contains(lockTimeout) else {
            throw ValidationError("A lock timeout is a number of seconds from 0 to 86400 (a day).")
        }
    }

    /// Runs `body` on the tracker: the database's, or with `--remote`, the copy of the server's, whose changes are
    /// then sent to the server (or queued, which standard error says).
    ///
    /// - Parameter following: Keep the copy in step with the server while `body` runs (`watch`); otherwise the copy
    ///   takes the server's state before `body`, and sends what `body` changed after.
    func withTracker<Result>(following: Bool = false, _ body: (TimeTracker) async throws -> Result) async throws -> Result {
        guard let copy = try await openRemoteCopy() else { return try await body(try await openTracker()) }
        if copy.serverWasUnreachable {
            StandardOutput.warn("\(copy.server.absoluteString) cannot be reached: this is what this machine last heard from it.")
        }
        let follower = following ? Task { await copy.follow() } : nil
        let result: Result
        do {
            result = try await body(copy.tracker)
        } catch {
            follower?.cancel()
            throw error
        }
        // Ended before the last exchanges, which must not run beside one of its own.
        follower?.cancel()
        await follower?.value
        try await copy.settle().tell()
        return result
    }

    /// The copy of the server `--remote` names; `nil` without `--remote`.
    func openRemoteCopy() async throws -> RemoteCopy? {
        guard let server = try remoteServer() else { return nil }
        return try await RemoteCopy.open(
            server: server, token: try remoteToken(), path: path ?? RemoteCopy.defaultPath(for: server),
            lockTimeout: .seconds(lockTimeout)
        )
    }

    /// Refuses `--remote` for a command that must run where the database is.
    func refuseRemote(_ command: String, because reason: String) throws {
        if remote != nil { throw ValidationError("\(command) does not take --remote: \(reason)") }
    }

    /// The server `--remote` names, checked.
    func remoteServer() throws -> URL? {
        guard let remote else { return nil }
        guard let url = URL(string: remote), ["http", "https"].contains(url.scheme?.lowercased()), url.host != nil,
              url.fragment == nil, url.query == nil
        else {
            throw ValidationError("--remote is a server's address such as http://127.0.0.1:8080/ (no #token: see --token-file).")
        }
        return url
    }

    /// The access token for `--remote`: the first line of `--token-file` when given (what the command line says
    /// wins over the environment), else `$TIMETRACK_TOKEN`.
    private func remoteToken() throws -> String {
        if let tokenFile { return try TokenFile.read(tokenFile) }
        guard let token = ProcessInfo.processInfo.environment["TIMETRACK_TOKEN"], !token.isEmpty else {
            throw ValidationError("--remote needs the server's access token: give --token-file or set $TIMETRACK_TOKEN.")
        }
        return token
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
