import Foundation
import GRDB
import Testing
import TimeTrackerTestSupport

/// Output that cannot be written (a full disk, a reader gone, standard output closed) ends `timetrack` with a message,
/// or quietly as `head` expects, never with a crash; a change that was committed says so even when its output is lost.
@Suite("timetrack when its output cannot be written", .serialized)
struct OutputFailureTests {
    @Test func aFullDiskIsAnErrorNotACrash() throws {
        let database = TemporaryDatabase()
        _ = try TimetrackProcess.run(["add", "Writing", "--db", database.path])
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        for arguments in [["list"], ["list", "--json"]] {
            let result = try TimetrackProcess.run(arguments + ["--db", database.path], standardOutput: full)
            #expect(result.status == 1)
            #expect(result.errors.contains("Error: could not write to standard output: No space left on device"))
        }
    }

    @Test func aCommittedChangeSaysSoWhenItsOutputCannotBeWritten() throws {
        let database = TemporaryDatabase()
        let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
        let result = try TimetrackProcess.run(["add", "Writing", "--db", database.path], standardOutput: full)
        #expect(result.status == 0)
        #expect(result.errors.contains(#"Added "Writing". (could not write to standard output: No space left on device)"#))
        #expect(try database.count("project") == 1)
    }

    @Test func aReaderThatLeavesEndsTheListQuietlyAsHeadExpects() throws {
        let database = TemporaryDatabase()
        _ = try TimetrackProcess.run(["add", "First", "--db", database.path])
        try DatabaseQueue(path: database.path).write { db in
            for number in 0..<2_000 {
                try db.execute(
                    sql: "INSERT INTO project (name, nameKey, created) VALUES (?, ?, 0)",
                    arguments: ["Project \(number)", "project \(number)"]
                )
            }
        }
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()  // `| head -1` once it has read its line
        let result = try TimetrackProcess.run(["list", "--db", database.path], standardOutput: pipe)
        #expect(result.status == 141)
        #expect(result.errors.isEmpty)
    }

    @Test func watchWithStandardOutputClosedIsAnErrorAndWritesNothingElsewhere() throws {
        let database = TemporaryDatabase()
        _ = try TimetrackProcess.run(["add", "Writing", "--db", database.path])
        let watch = Process()
        watch.executableURL = URL(fileURLWithPath: "/bin/sh")
        watch.arguments = ["-c", #"exec "$0" watch --db "$1" >&-"#, TimetrackProcess.executable.path, database.path]
        let errors = Pipe()
        watch.standardError = errors
        try processSpawning.withLock { try watch.run() }
        #expect(watch.waitForExit(), "a watch that cannot write must end")
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(watch.terminationStatus == 1)
        #expect(message.contains("Error: could not write to standard output: Bad file descriptor"))
        #expect(try database.count("project") == 1)
    }
}
