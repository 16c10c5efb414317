import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import Testing

@Suite("Encrypted storage under SIGKILL", .serialized)
struct SecureCrashTests {
    /// The writer's arguments: it writes increasing values under `key`, sealed with the key in `keyFile`, and prints
    /// "ready" once it has written its first.
    static func writerArguments(directory: URL, keyFile: URL, key: String) -> [String] {
        [directory.path, keyFile.path, key, "\(ProcessInfo.processInfo.processIdentifier)"]
    }

    @Test func processesRacingToCreateTheKeyFileAllSealWithTheOneThatWon() async throws {
        let directory = TemporaryDirectory()
        let keyFile = directory.url.appendingPathComponent("race.key")
        let data = directory.url.appendingPathComponent("data")
        // Started together, each creates the key file unless another did so first.
        let endedBySignal = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<6 {
                let arguments = Self.writerArguments(directory: data, keyFile: keyFile, key: "race.\(index)")
                group.addTask { try await killHelperAtARandomInstant("StatehouseSecureCrashWriter", arguments) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(endedBySignal.allSatisfy { $0 }, "a writer ended by itself: it could not start")
        let storage = EncryptedStorage(directory: data, key: try .loadOrCreate(at: keyFile))
        for index in 0..<6 {
            let sealed = try #require(try storage.load(key: "race.\(index)"), "writer \(index) stored nothing")
            #expect(try JSONDecoder().decode(Int.self, from: sealed) >= 1)
        }
    }

    @Test func aProcessKilledAtAnyInstantLeavesAValueThatOpensAndDecodes() async throws {
        let directory = TemporaryDirectory()
        let keyFile = directory.url.appendingPathComponent("crash.key")
        let data = directory.url.appendingPathComponent("data")
        let storage = EncryptedStorage(directory: data, key: try .loadOrCreate(at: keyFile))
        var lastSeen = 0
        for round in 0..<50 {
            let arguments = Self.writerArguments(directory: data, keyFile: keyFile, key: "crash.counter")
            #expect(try await killHelperAtARandomInstant("StatehouseSecureCrashWriter", arguments), "round \(round): the writer ended by itself")
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
