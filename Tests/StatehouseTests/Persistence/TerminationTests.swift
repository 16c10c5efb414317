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
    private func runWriter(mode: String, in directory: TemporaryDirectory, key: String) throws -> Process {
        let process = Process()
        process.executableURL = helperExecutable(named: "StatehouseExitWriter")
        process.arguments = [directory.url.path, key, mode]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        if mode == "sigterm" {
            // Waits for the child's "ready": its pending change is made and its handlers are installed.
            let line = output.fileHandleForReading.readData(ofLength: 6)
            #expect(String(decoding: line, as: UTF8.self) == "ready\n")
        }
        return process
    }

    private func storedTally(in directory: TemporaryDirectory, key: String) throws -> Tally? {
        try FileStorage(directory: directory.url).load(key: key).map { try JSONDecoder().decode(Tally.self, from: $0) }
    }

    /// Issue 10, defect 12: `exit(0)` from inside a reducer trapped ("Recursive call to lock Mutex": the exit flush
    /// read the state under the lock the reducer held) and lost the pending write.
    @Test func exitInsideAReducerWritesTheLastCompletedStateWithoutTrapping() throws {
        let directory = TemporaryDirectory()
        let process = try runWriter(mode: "exit-in-reducer", in: directory, key: "exit.reducer")
        process.waitUntilExit()
        #expect(process.terminationReason == .exit)
        #expect(process.terminationStatus == 0)
        #expect(try storedTally(in: directory, key: "exit.reducer") == Tally(count: 41))
    }

    /// SIGTERM used to end the process with the coalescing window's changes unwritten; with
    /// `StatehouseLifecycle.flushOnTermination()` they are written first, and the process still ends by the signal.
    @Test(arguments: [SIGTERM, SIGINT])
    func flushOnTerminationWritesPendingChangesThenEndsByTheSignal(signal: Int32) throws {
        let directory = TemporaryDirectory()
        let key = "exit.signal.\(signal)"
        let process = try runWriter(mode: "sigterm", in: directory, key: key)
        #expect(try storedTally(in: directory, key: key) == nil)  // still in its 60 s window
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal)
        #expect(process.terminationStatus == signal)
        #expect(try storedTally(in: directory, key: key) == Tally(count: 41))
    }
}
