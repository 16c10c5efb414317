import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Gives a suite a private PostgreSQL cluster of its own, stopped when the suite ends, passed or failed.
struct PostgresClusterTrait: SuiteTrait, TestTrait, TestScoping {
    @TaskLocal static var current: PostgresTestCluster?

    func provideScope(
        for test: Test,
        testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        let cluster = try PostgresTestCluster.start()
        defer { cluster.stop() }
        try await Self.$current.withValue(cluster, operation: function)
    }
}

extension Trait where Self == PostgresClusterTrait {
    /// A private cluster for the suite. Without PostgreSQL installed the suite is skipped: install it with
    /// `apt-get install postgresql` (Debian), or run `scripts/prerequisites`.
    static var postgresCluster: Self { PostgresClusterTrait() }
}

/// The suite's cluster.
var cluster: PostgresTestCluster {
    get throws {
        try #require(PostgresClusterTrait.current, "the suite needs the .postgresCluster trait")
    }
}

/// Runs `body` with a client of the suite's cluster, running (off the cooperative pool) until `body` returns.
func withClient<Result: Sendable>(
    configuration: PostgresClient.Configuration? = nil,
    _ body: @Sendable (PostgresClient) async throws -> Result
) async throws -> Result {
    let client = PostgresClient(configuration: try configuration ?? cluster.clientConfiguration)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// Runs `body` with a storage on a table of its own, so that tests sharing a cluster do not see each other's keys.
/// Its client's sessions are named after the table (`application_name`), so that a test can tell them from the
/// sessions of the suite's earlier tests, which may still be ending (see ``sessions(of:where:)``).
func withStorage<Result: Sendable>(
    _ body: @Sendable (PostgresStorage) async throws -> Result
) async throws -> Result {
    let table = uniqueTable()
    return try await withClient(configuration: try clientConfiguration(named: table)) { client in
        try await body(PostgresStorage(client: client, table: table))
    }
}

/// The suite's cluster's client configuration, its sessions named `application` (`application_name`), so that a
/// test can tell them in `pg_stat_activity` (see ``sessions(named:where:)``).
func clientConfiguration(named application: String) throws -> PostgresClient.Configuration {
    var configuration = try cluster.clientConfiguration
    configuration.options.additionalStartupParameters = [("application_name", application)]
    return configuration
}

/// The server processes of `storage`'s sessions (made by ``withStorage(_:)``) that match `condition`, a SQL
/// condition on `pg_stat_activity`.
func sessions(of storage: PostgresStorage, where condition: String = "TRUE") throws -> [Int32] {
    try sessions(named: storage.table, where: condition)
}

/// The server processes of the sessions whose `application_name` is `application` and that match `condition`.
func sessions(named application: String, where condition: String = "TRUE") throws -> [Int32] {
    try cluster.sql("""
        SELECT pid FROM pg_stat_activity WHERE application_name = '\(application)' AND (\(condition))
        """).split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }
}

/// How often `eventually` checks a condition that runs psql: a process every millisecond would load the machine.
let psqlPolling = Duration.milliseconds(50)

/// The server processes of `storage`'s sessions whose last statement was its listener's: the catch-up, `LISTEN` or
/// the heartbeat.
func listeningSessions(of storage: PostgresStorage) throws -> [Int32] {
    try sessions(
        of: storage,
        where: "query LIKE '%unnest%' OR query LIKE '%StatehousePostgres heartbeat%' OR query LIKE 'LISTEN%'"
    )
}

/// Saves `text` under `key` in `storage`'s table through a client of its own: a change made by another process.
func saveFromAnotherClient(_ text: String, key: String = "k", in storage: PostgresStorage) async throws {
    try await withClient { other in
        let writer = PostgresStorage(client: other, table: storage.table)
        try await onThread { try writer.save(Data(text.utf8), key: key) }
    }
}

/// The server process of `storage`'s listening session, once there is exactly one (its listener may be between
/// connections).
func theListeningSession(of storage: PostgresStorage) async throws -> Int32 {
    #expect(await eventually(every: psqlPolling) { (try? listeningSessions(of: storage))?.count == 1 })
    return try #require(try listeningSessions(of: storage).first)
}

/// Runs `body` with a storage whose key `k` is watched, once the watch had its first call: with the watch's calls
/// and the server process of the storage's listening session.
func withWatchedStorage(
    _ body: @Sendable (PostgresStorage, WatchCalls, _ listener: Int32) async throws -> Void
) async throws {
    try await withStorage { storage in
        let calls = WatchCalls()
        let watch = try storage.watchChanges(of: "k") { calls() }
        defer { watch.cancel() }
        #expect(await eventually { calls.count == 1 })
        try await body(storage, calls, try await theListeningSession(of: storage))
    }
}

/// A new watch of `k` on `storage` gets its first call, and another for a change made by another client.
func expectANewWatchFollows(_ storage: PostgresStorage) async throws {
    let calls = WatchCalls()
    let watch = try storage.watchChanges(of: "k") { calls() }
    defer { watch.cancel() }
    #expect(await eventually { calls.count == 1 })
    try await saveFromAnotherClient("1", in: storage)
    #expect(await eventually { calls.count == 2 })
}

/// Runs `sql` in psql on a thread of its own until it ends: for a session that holds something (a lock) while the
/// test goes on. Run in a task instead, the wait took one of the cooperative pool's two threads for as long: two
/// such holders at once (two suites) stalled every test of the process until their `pg_sleep` ended, ten minutes.
@discardableResult
func holdInPsql(_ sql: String) throws -> Task<Void, Never> {
    let cluster = try cluster
    return Task { _ = try? await onThread { try cluster.sql(sql) } }
}

/// A table name no other test uses.
func uniqueTable() -> String {
    "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
}

/// Runs `body` on a thread of its own, off the cooperative pool, and returns its result: for the storage's
/// blocking operations where a test holds several at once.
func onThread<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Swift.Result { try body() })
        }
    }
}

/// A helper process running `StatehousePostgresWorker`, whose output lines the test reads as they come.
final class Worker {
    private let process: Process
    private let input: Pipe
    private let lines = Recorder<String>()
    /// Set once the worker's output ended: it exited (or crashed) and everything it printed is in `lines`.
    private let ended = Recorder<Bool>()

    init(_ arguments: [String]) throws {
        process = Process()
        process.executableURL = helperExecutable(named: "StatehousePostgresWorker")
        process.arguments = arguments
        input = Pipe()
        let output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        let (recorded, ended, reading) = (self.lines, self.ended, output.fileHandleForReading)
        Task.detached {
            for await line in readLines(from: reading) { recorded.append(line) }
            ended.append(true)
        }
    }

    /// Every line printed so far.
    var output: [String] { lines.elements }

    /// Waits until the worker printed a line starting with `prefix`; returns it. `nil` if it printed "failed…",
    /// or ended (a crash, say) without printing it.
    func line(startingWith prefix: String, timeout: Duration = .seconds(120)) async -> String? {
        _ = await eventually(timeout: timeout) {
            output.contains { $0.hasPrefix(prefix) || $0.hasPrefix("failed") } || !ended.elements.isEmpty
        }
        return output.first { $0.hasPrefix(prefix) }
    }

    /// Sends a line to the worker's standard input; to a worker that ended, sends nothing (the throwing write: the
    /// other one stops the test process on a broken pipe).
    func send(_ line: String) {
        try? input.fileHandleForWriting.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Waits for the worker to end; returns its exit status.
    func finish() async -> Int32 {
        _ = await eventually(timeout: .seconds(120)) { !process.isRunning }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
