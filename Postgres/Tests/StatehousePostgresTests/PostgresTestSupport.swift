import Foundation
import PostgresNIO
import PostgresTestCluster
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
    _ body: @Sendable (PostgresClient) async throws -> Result
) async throws -> Result {
    let client = PostgresClient(configuration: try cluster.clientConfiguration)
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
        defer { group.cancelAll() }
        return try await body(client)
    }
}

/// Runs `body` with a storage on a table of its own, so that tests sharing a cluster do not see each other's keys.
func withStorage<Result: Sendable>(
    _ body: @Sendable (PostgresStorage) async throws -> Result
) async throws -> Result {
    try await withClient { client in
        try await body(PostgresStorage(client: client, table: uniqueTable()))
    }
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
