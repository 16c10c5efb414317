import Foundation
import PostgresNIO
import StatehouseTestSupport

/// A private PostgreSQL cluster for tests and benchmarks: made with `initdb` in a temporary directory (as the
/// unprivileged user `nobody` when running as root, since the server refuses to run as root), served by `pg_ctl` on
/// a free loopback port and a socket in that directory, and stopped and removed by ``stop()``, or by a watchdog
/// process if this one dies first. It never touches a system cluster.
public final class PostgresTestCluster: Sendable {
    /// The user the tests connect as (a superuser, trusted on loopback).
    public static let user = "statehouse"
    public static let database = "postgres"

    public let port: Int
    public let directory: URL
    private let binaries: URL

    /// The folder of PostgreSQL's programs (`initdb`, `pg_ctl`, `psql`), newest version first; `nil` if PostgreSQL
    /// is not installed (on Debian: `apt-get install postgresql`).
    public static let binaryDirectory: URL? = {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        let candidates = versions.compactMap(Int.init).sorted(by: >).map { "/usr/lib/postgresql/\($0)/bin" }
            + ["/usr/local/bin", "/usr/bin", "/opt/homebrew/bin"]
        return candidates.map { URL(fileURLWithPath: $0) }.first { directory in
            ["initdb", "pg_ctl", "psql"].allSatisfy {
                FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent($0).path)
            }
        }
    }()

    public static var isInstalled: Bool { binaryDirectory != nil }

    private init(port: Int, directory: URL, binaries: URL) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
    }

    /// Makes and starts a cluster; a port taken meanwhile by someone else is tried again with another.
    public static func start() throws -> PostgresTestCluster {
        guard let binaries = binaryDirectory else { throw ClusterError("PostgreSQL is not installed: apt-get install postgresql") }
        let directory = URL(fileURLWithPath: NSTemporaryDirectory())
            .appendingPathComponent("statehouse-postgres-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if isRoot { try run("/bin/chown", ["nobody:nogroup", directory.path]) }
        let data = directory.appendingPathComponent("data").path
        try runAsServerUser(binaries.appendingPathComponent("initdb").path, [
            "-D", data, "-U", user, "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync",
        ])
        try startWatchdog(binaries: binaries, directory: directory)
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = try freeLoopbackPort()
            let cluster = PostgresTestCluster(port: port, directory: directory, binaries: binaries)
            do {
                try cluster.pgCtl(["start", "-w", "-t", "120", "-l", directory.appendingPathComponent("server.log").path, "-o", [
                    "-p \(port)", "-c listen_addresses=127.0.0.1", "-c unix_socket_directories='\(directory.path)'",
                    "-c fsync=off", "-c synchronous_commit=off", "-c full_page_writes=off", "-c max_connections=200",
                ].joined(separator: " ")])
                return cluster
            } catch {
                lastError = error
            }
        }
        try? FileManager.default.removeItem(at: directory)
        throw lastError ?? ClusterError("PostgreSQL did not start")
    }

    /// Stops the server at once and removes its directory.
    public func stop() {
        try? pgCtl(["stop", "-m", "immediate", "-w"])
        try? FileManager.default.removeItem(at: directory)
    }

    /// Restarts the server (`pg_ctl restart`): every connection is dropped. The server log goes on in the same file
    /// (without `-l`, the restarted server wrote it to `pg_ctl`'s output, a file removed at once).
    public func restart() throws {
        let log = directory.appendingPathComponent("server.log").path
        try pgCtl(["restart", "-m", "fast", "-w", "-t", "120", "-l", log])
    }

    /// Runs `sql` with `psql` in `database` and returns what it printed (unaligned, tuples only).
    @discardableResult
    public func sql(_ sql: String, database: String = database) throws -> String {
        try Self.run(binaries.appendingPathComponent("psql").path, [
            "-h", "127.0.0.1", "-p", "\(port)", "-U", Self.user, "-d", database, "-v", "ON_ERROR_STOP=1",
            "-Atc", sql,
        ]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Ends every other session's backend on the database (`pg_terminate_backend`); returns how many.
    @discardableResult
    public func terminateConnections() throws -> Int {
        let ended = try sql("""
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = '\(Self.database)' AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """)
        return Int(ended) ?? 0
    }

    public var clientConfiguration: PostgresClient.Configuration {
        PostgresClient.Configuration(
            host: "127.0.0.1", port: port, username: Self.user, password: nil, database: Self.database, tls: .disable
        )
    }

    /// The arguments that tell a helper process where the server is.
    public var processArguments: [String] { ["--port", "\(port)"] }

    // MARK: Processes

    /// Runs `pg_ctl` in a session of its own, so that the server it starts is in no process group of this
    /// process: a signal meant for the test's processes (the suite's workers) must not reach it.
    private func pgCtl(_ arguments: [String]) throws {
        try Self.runAsServerUser(
            "/usr/bin/setsid",
            ["--wait", binaries.appendingPathComponent("pg_ctl").path, "-D", directory.appendingPathComponent("data").path]
                + arguments
        )
    }

    /// Stops the server in `directory` and removes the directory once this process is gone, however it ends (a
    /// crash, a kill): started before the server, so that no server outlives its test run.
    @discardableResult
    private static func startWatchdog(binaries: URL, directory: URL) throws -> pid_t {
        let pgCtl = binaries.appendingPathComponent("pg_ctl").path
        let data = directory.appendingPathComponent("data").path
        let stop = (isRoot ? "runuser -u nobody -- " : "") + "'\(pgCtl)' -D '\(data)' -m immediate stop"
        let script = """
            while kill -0 \(getpid()) 2>/dev/null; do sleep 1; done
            \(stop) >/dev/null 2>&1; rm -rf '\(directory.path)'
            """
        // setsid: a session of its own, so that a signal to this process's group does not end the watchdog too.
        return try spawn("/usr/bin/setsid", ["/bin/sh", "-c", script], output: "/dev/null")
    }

    private static var isRoot: Bool { geteuid() == 0 }

    private static func runAsServerUser(_ executable: String, _ arguments: [String]) throws {
        if isRoot {
            try run("/usr/sbin/runuser", ["-u", "nobody", "--", executable] + arguments)
        } else {
            try run(executable, arguments)
        }
    }

    /// Runs a program to its end; returns its output, throws with it if the program failed.
    ///
    /// On `posix_spawn` and `waitpid` rather than Foundation's `Process`: `pg_ctl start` leaves the server running
    /// with the program's output inherited, so reading a pipe to its end would wait for the server, and
    /// `Process.waitUntilExit` was seen never returning for it.
    @discardableResult
    static func run(_ executable: String, _ arguments: [String]) throws -> String {
        let outputFile = NSTemporaryDirectory() + "statehouse-postgres-output-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: outputFile) }
        let pid = try spawn(executable, arguments, output: outputFile)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? ""
        // WIFEXITED and WEXITSTATUS, which Swift does not import: the low 7 bits are the signal, the next 8 the code.
        guard status & 0x7F == 0 && (status >> 8) & 0xFF == 0 else {
            throw ClusterError("\(executable) \(arguments.joined(separator: " ")) failed (\(status)): \(output)")
        }
        return output
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), looked up at run time: Swift's Glibc
    /// module does not import it.
    private static let addCloseFrom: AddCloseFrom? = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np").map {
        unsafeBitCast($0, to: AddCloseFrom.self)
    }
    private typealias AddCloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// Starts a program with its standard output and error going to the file `output`, and nothing as its input.
    private static func spawn(_ executable: String, _ arguments: [String], output: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        // Nothing else: postgres-nio's sockets are not close-on-exec, and a child keeps what it inherits open. A
        // watchdog (alive for the whole run) started while a test's listener was connected would keep that socket
        // open after the test closed it, and the server would never see the close (ListenerHeartbeatTests waits
        // for that close, and would fail whenever another suite started its cluster meanwhile).
        _ = addCloseFrom?(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, nil, argv, environ)
        guard result == 0 else { throw ClusterError("could not start \(executable): error \(result)") }
        return pid
    }
}

public struct ClusterError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
