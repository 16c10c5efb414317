import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// The child process's state (see StatehouseExitWriter).
private struct Tally: Codable, Equatable {
    var count = 0
}

/// Processes that end with writes pending in a coalescing window. Serialized: each test runs a child process.
@Suite("Ending the process", .serialized)
struct TerminationTests {
    /// Starts the writer; in "sigterm" mode, returns once it says "ready": its pending change is made and its
    /// handlers are installed.
    private func startWriter(mode: String, in directory: TemporaryDirectory, key: String) async throws -> Process {
        try await offThePool {
            let process = Process()
            process.executableURL = helperExecutable(named: "StatehouseExitWriter")
            process.arguments = [directory.url.path, key, mode]
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            if mode == "sigterm" {
                _ = output.fileHandleForReading.readData(ofLength: 6)
            }
            return process
        }
    }

    /// Waits for `process` to end.
    private func ending(of process: Process) async -> (reason: Process.TerminationReason, status: Int32) {
        await offThePool {
            process.waitUntilExit()
            return (process.terminationReason, process.terminationStatus)
        }
    }

    private func storedTally(in directory: TemporaryDirectory, key: String) throws -> Tally? {
        try FileStorage(directory: directory.url).load(key: key).map { try JSONDecoder().decode(Tally.self, from: $0) }
    }

    /// `exit(0)` from inside a reducer writes the last completed state: the exit's flush must not read the state
    /// under the lock the reducer holds (a trap, "Recursive call to lock Mutex", and the pending write lost).
    @Test func exitInsideAReducerWritesTheLastCompletedStateWithoutTrapping() async throws {
        let directory = TemporaryDirectory()
        let process = try await startWriter(mode: "exit-in-reducer", in: directory, key: "exit.reducer")
        let ended = await ending(of: process)
        #expect(ended.reason == .exit)
        #expect(ended.status == 0)
        #expect(try storedTally(in: directory, key: "exit.reducer") == Tally(count: 41))
    }

    /// SIGTERM or SIGINT would end the process with the coalescing window's changes unwritten; with
    /// `StatehouseLifecycle.flushOnTermination()` they are written first, and the process still ends by the signal.
    @Test(arguments: [SIGTERM, SIGINT])
    func flushOnTerminationWritesPendingChangesThenEndsByTheSignal(signal: Int32) async throws {
        let directory = TemporaryDirectory()
        let key = "exit.signal.\(signal)"
        let process = try await startWriter(mode: "sigterm", in: directory, key: key)
        #expect(try storedTally(in: directory, key: key) == nil)  // still in its coalescing window
        kill(process.processIdentifier, signal)
        let ended = await ending(of: process)
        #expect(ended.reason == .uncaughtSignal)
        #expect(ended.status == signal)
        #expect(try storedTally(in: directory, key: key) == Tally(count: 41))
    }
}
