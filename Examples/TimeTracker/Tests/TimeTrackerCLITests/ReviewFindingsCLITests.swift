import Foundation
import GRDB
import Testing
import TimeTrackerTestSupport

/// What a review of issue 11's fixes still got through, running `timetrack` as an attacker or a clumsy user would:
/// each test failed before its fix. The comments describe each defect as it was found. Slow: two wait for timeouts.
@Suite("Attack: timetrack misused, what the review of issue 11 got through", .serialized)
struct ReviewFindingsCLITests {
    // A user who wants "wait as long as it takes" types a big number: Duration(seconds:) overflows, a crash (132).
    @Test func aHugeLockTimeoutIsNotACrash() throws {
        let database = TemporaryDatabase()
        let result = try TimetrackProcess.run(["list", "--lock-timeout", "1e30", "--db", database.path])
        #expect(result.status != 132)
        #expect(!result.errors.contains("Fatal error"))
    }

    // Same for "never close idle connections": the nanoseconds overflow Int64 in ConnectionLimits.serverConfiguration.
    @Test func aHugeIdleTimeoutIsNotACrash() async throws {
        let database = TemporaryDatabase()
        let server = try TimetrackProcess(["serve", "--port", "0", "--idle-timeout", "1e10", "--db", database.path])
        _ = await eventually(timeout: .seconds(30)) {
            server.output.contains("timetrack is serving") || server.errors.contains("Error") || server.errors.contains("Fatal error")
        }
        #expect(!server.errors.contains("Fatal error"))
        server.signal(SIGINT)
        _ = server.waitForExit()
    }

    // Another application's database whose only table is called `project` passes the owner check (its tables are a
    // subset of timetrack's names), is claimed (application_id, WAL, grdb_migrations), then fails with SQL's words.
    @Test func anotherApplicationsDatabaseWithATableNamedProjectIsLeftUntouched() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        try DatabaseQueue(path: database.path).write { db in
            try db.execute(sql: "CREATE TABLE project (title TEXT, budget INTEGER)")
        }
        let result = try TimetrackProcess.run(["list", "--db", database.path])
        #expect(result.status == 1)
        #expect(result.errors.contains("another application"), "\(result.errors)")
        var readOnly = Configuration()
        readOnly.readonly = true
        let (applicationID, journal, tables) = try DatabaseQueue(path: database.path, configuration: readOnly).read { db in
            (
                try Int.fetchOne(db, sql: "PRAGMA application_id") ?? -1,
                try String.fetchOne(db, sql: "PRAGMA journal_mode") ?? "",
                try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'table'")
            )
        }
        #expect(applicationID == 0)
        #expect(journal == "delete")
        #expect(tables == ["project"])
    }

    // `--db ~/tracking/` (meant as a directory): a file named `tracking` is made, then the message says the database
    // "was removed or replaced while timetrack had it open".
    @Test func aPathEndingInASlashGetsAMessageAboutThePath() throws {
        let database = TemporaryDatabase()
        try FileManager.default.createDirectory(at: database.directory, withIntermediateDirectories: true)
        let path = database.directory.appendingPathComponent("tracking").path + "/"
        let result = try TimetrackProcess.run(["list", "--db", path])
        #expect(result.status == 1)
        #expect(!result.errors.contains("removed or replaced"), "\(result.errors)")
    }

    // A connection that sends its body one byte at a time is never idle, so the idle timeout never closes it; with
    // the connections all taken that way, nobody else gets an answer for as long as the bodies last (16 KiB at a
    // byte a second: 4.5 hours).
    @Test func aBodySentByteByByteDoesNotHoldTheServerForever() async throws {
        let database = TemporaryDatabase()
        let (server, port) = try await TimetrackProcess.serve([
            "--idle-timeout", "1", "--max-connections", "2", "--db", database.path,
        ])
        let slow = try (0..<2).map { _ in try RawConnection(port: port) }
        for connection in slow {
            connection.send(
                "POST /api/projects HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 16000\r\n\r\n"
            )
        }
        try await Task.sleep(for: .milliseconds(500))
        let visitor = try RawConnection(port: port)
        visitor.send("GET /api/projects HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        var answer = ""
        // Twenty times the idle timeout: the server has had every chance to drop the two that never finish.
        let deadline = ContinuousClock.now + .seconds(20)
        while answer.isEmpty, ContinuousClock.now < deadline {
            for connection in slow { connection.send(" ") }
            answer = visitor.receive(timeout: .milliseconds(500))
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "no answer in 20 s while two bodies trickled in")
        server.signal(SIGINT)
        _ = server.waitForExit()
    }

    // An event stream whose reader never reads: once the socket buffers are full, its write waits forever, and
    // SIGTERM (or a lost database) never ends the server; meanwhile it accepts nothing.
    @Test func aPageThatNeverReadsDoesNotKeepTheServerFromStopping() async throws {
        let database = TemporaryDatabase()
        _ = try TimetrackProcess.run(["add", "Seed", "--db", database.path])
        try await DatabaseQueue(path: database.path).write { db in
            for number in 0..<300 {
                let name = String(format: "%04d", number) + String(repeating: "x", count: 390)
                try db.execute(
                    sql: "INSERT INTO project (name, nameKey, created) VALUES (?, ?, 0)", arguments: [name, name]
                )
            }
        }
        let output = database.directory.appendingPathComponent("serve.out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let server = Process()
        server.executableURL = TimetrackProcess.executable
        server.arguments = ["serve", "--port", "0", "--db", database.path]
        server.standardOutput = try FileHandle(forWritingTo: output)
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        var port: Int?
        _ = await eventually(timeout: .seconds(30)) {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            port = text.firstMatch(of: #/127\.0\.0\.1:(\d+)/#).flatMap { Int($0.1) }
            return port != nil
        }
        let serverPort = try #require(port)
        let readers = try (0..<3).map { _ in try RawConnection(port: serverPort) }
        for reader in readers { reader.send("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(serverPort)\r\n\r\n") }
        try await Task.sleep(for: .seconds(1))
        for _ in 0..<100 {
            for action in ["start", "stop"] {
                let connection = try RawConnection(port: serverPort)
                connection.send(
                    "POST /api/projects/1/\(action) HTTP/1.1\r\nHost: 127.0.0.1:\(serverPort)\r\n"
                        + "Content-Type: application/json\r\nConnection: close\r\n\r\n"
                )
                _ = connection.receive(timeout: .seconds(30)) { $0.contains("\r\n\r\n{") }
            }
        }
        kill(server.processIdentifier, SIGTERM)
        let stopped = await eventually(timeout: .seconds(30)) { !server.isRunning }
        #expect(stopped, "still running 30 s after SIGTERM, with three event streams that do not read")
        _ = readers
    }
}
