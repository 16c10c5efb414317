import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing

@Suite("Encrypted storage under SIGKILL", .serialized)
struct SecureCrashTests {
    /// The helper executable, built next to the test bundle.
    static var writer: URL { helperExecutable(named: "StatehouseSecureCrashWriter") }

    /// Starts the writer on `key`; it prints "ready" to `output` once it has written its first value.
    static func launchWriter(directory: URL, keyFile: URL, key: String) throws -> (process: Process, output: FileHandle) {
        let process = Process()
        process.executableURL = writer
        process.arguments = [directory.path, keyFile.path, key, "\(ProcessInfo.processInfo.processIdentifier)"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output.fileHandleForReading)
    }

    @Test func processesRacingToCreateTheKeyFileAllSealWithTheOneThatWon() throws {
        let directory = TemporaryDirectory()
        let keyFile = directory.url.appendingPathComponent("race.key")
        let data = directory.url.appendingPathComponent("data")
        // Started together, each creates the key file unless another did so first.
        let writers = try (0..<6).map { try Self.launchWriter(directory: data, keyFile: keyFile, key: "race.\($0)") }
        for (process, output) in writers {
            _ = output.availableData  // "ready"
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal, "a writer ended by itself: it could not start")
        }
        let storage = EncryptedStorage(directory: data, key: try .loadOrCreate(at: keyFile))
        for index in 0..<6 {
            let sealed = try #require(try storage.load(key: "race.\(index)"), "writer \(index) stored nothing")
            #expect(try JSONDecoder().decode(Int.self, from: sealed) >= 1)
        }
    }

    @Test func aProcessKilledAtAnyInstantLeavesAValueThatOpensAndDecodes() throws {
        let directory = TemporaryDirectory()
        let keyFile = directory.url.appendingPathComponent("crash.key")
        let data = directory.url.appendingPathComponent("data")
        let storage = EncryptedStorage(directory: data, key: try .loadOrCreate(at: keyFile))
        var lastSeen = 0
        for round in 0..<50 {
            let (process, output) = try Self.launchWriter(directory: data, keyFile: keyFile, key: "crash.counter")
            _ = output.availableData  // "ready": the container exists and has written
            usleep(UInt32.random(in: 1_000...20_000))     // a random instant to kill it at, not a wait for a signal
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(process.terminationReason == .uncaughtSignal, "round \(round): the writer ended by itself")
            let sealed = try #require(try storage.load(key: "crash.counter"), "round \(round): nothing stored")
            let value = try JSONDecoder().decode(Int.self, from: sealed)
            #expect(value > lastSeen, "round \(round): the stored value went back or did not move")
            lastSeen = value
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: data.path)
        #expect(!names.contains { $0.contains("unauthentic") })
        // A kill between create and rename may leave a temporary file, never a torn one.
        #expect(names.filter { $0.hasSuffix(".tmp") }.count <= 50)
    }
}
