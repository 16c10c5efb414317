import Foundation
import GRDB
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// A database file removed or replaced under a running tracker (its main file, its -wal or its -shm) gets no more
/// writes: a write is refused rather than confirmed into a file nobody will open again, and the state says why.
@Suite("A SQLite database removed or replaced under the tracker", .serialized)
struct SQLiteFileReplacedTests {
    private static var timetrack: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("timetrack")
    }

    /// Runs a program to its end; its status and standard output.
    private static func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try processSpawning.withLock { try process.run() }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// A database file removed, or replaced by another, under a running tracker: each write is refused as
    /// `databaseGone`, the file now at the path gets nothing, and the state says why, so that the views tell the user.
    @Test(arguments: [false, true])
    func aDatabaseRemovedOrReplacedGetsNoMoreWritesAndTheStateSaysWhy(replaced: Bool) async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        try await tracker.perform(.addProject(name: "Before"))
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        if replaced {
            // A restore: another database moved into place.
            let restored = database.directory.appendingPathComponent("restored.sqlite").path
            try await DatabaseQueue(path: restored).write { try $0.execute(sql: "CREATE TABLE project (name TEXT)") }
            try FileManager.default.moveItem(atPath: restored, toPath: database.path)
        }
        await #expect(throws: TrackerError.databaseGone(path: database.path)) {
            try await tracker.perform(.addProject(name: "After"))
        }
        #expect(await eventually { tracker.store.state.problem != nil })
        #expect(tracker.store.state.problem?.contains("was removed or replaced") == true)
        if replaced { #expect(try database.count("project") == 0) }  // the file now there got nothing
    }

    /// A write after the -wal was removed (a clumsy clean-up) is refused: confirmed into the unlinked journal, it would
    /// be gone once the tracker closes.
    @Test func aWriteIsNotConfirmedAfterTheJournalWasRemoved() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        try await tracker.perform(.addProject(name: "Before"))
        try FileManager.default.removeItem(atPath: database.path + "-wal")
        await #expect(throws: TrackerError.self) { try await tracker.perform(.addProject(name: "After")) }
    }

    /// With the -shm removed under a running tracker, another process makes a new one, and the two no longer share the
    /// WAL index: no write either confirms may be lost (one written over the other's frames).
    @Test func removingTheSharedMemoryFileLosesNoConfirmedWrite() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        try await tracker.perform(.addProject(name: "Before"))
        try FileManager.default.removeItem(atPath: database.path + "-shm")
        let cli = try Self.run(Self.timetrack.path, ["add", "From the CLI", "--db", database.path])
        var serverConfirmed = true
        do { try await tracker.perform(.addProject(name: "From the server")) } catch { serverConfirmed = false }
        let listed = try Self.run(Self.timetrack.path, ["list", "--json", "--db", database.path])
        if cli.status == 0 {
            #expect(listed.output.contains("From the CLI"), "confirmed by the CLI, then lost: \(listed.output)")
        }
        if serverConfirmed {
            #expect(listed.output.contains("From the server"), "confirmed by the tracker, then lost: \(listed.output)")
        }
    }
}
