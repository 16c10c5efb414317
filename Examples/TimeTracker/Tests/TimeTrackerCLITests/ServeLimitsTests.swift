import Foundation
import GRDB
import Testing
import TimeTrackerTestSupport

/// `serve` against clients that do not play along: half-sent requests, bodies that trickle in, pages that never read,
/// more connections than descriptors, requests from beyond loopback. Slower than the rest: each opens hundreds of
/// connections or waits for a timeout.
@Suite("timetrack serve under load and misuse", .serialized)
struct ServeLimitsTests {
    /// Half of a request: the server waits for the rest.
    private static let halfARequest = "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "

    private static func get(_ path: String, port: Int, headers: String = "") throws -> String {
        let connection = try RawConnection(port: port)
        connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(headers)Connection: close\r\n\r\n")
        return connection.receive(timeout: .seconds(60))
    }

    /// Requests that stop halfway are closed by the idle timeout, 1,000 of them, and the server still answers.
    @Test func halfSentRequestsAreClosedByTheIdleTimeout() async throws {
        let database = TemporaryDatabase()
        let (server, port) = try await TimetrackProcess.serve(["--idle-timeout", "1", "--db", database.path])
        let connections = try (0..<1_000).map { _ in try RawConnection(port: port) }
        for connection in connections { connection.send(Self.halfARequest) }
        let closed = connections.filter { $0.isClosedByServer(within: .seconds(60)) }.count
        #expect(closed == 1_000)
        #expect(try Self.get("/api/projects", port: port).hasPrefix("HTTP/1.1 200"))
        server.signal(SIGINT)
        #expect(server.waitForExit() == 0)
    }

    /// Out of descriptors (`ulimit -n 128`, 300 half-sent requests), the server keeps serving the connections it has,
    /// and serves new ones once the crowd leaves.
    @Test func runningShortOfDescriptorsKeepsServingTheConnectionsItHas() async throws {
        let database = TemporaryDatabase()
        let (server, port) = try await TimetrackProcess.serve(["--db", database.path], shellPrefix: "ulimit -n 128")
        let first = try RawConnection(port: port)
        var crowd = try (0..<300).map { _ in try RawConnection(port: port) }
        for connection in crowd { connection.send(Self.halfARequest) }
        // A connection the server has still gets its answer while the crowd holds every other place.
        first.send("GET /api/projects HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
        #expect(first.receive(timeout: .seconds(60)) { $0.contains("\r\n\r\n[]") }.hasPrefix("HTTP/1.1 200"))
        crowd.removeAll()  // closes them
        // Once the crowd leaves, new connections are served again: the server is alive and accepting.
        #expect(try Self.get("/api/projects", port: port).hasPrefix("HTTP/1.1 200"))
        server.signal(SIGINT)
        #expect(server.waitForExit() == 0)
    }

    /// Listening beyond loopback, the API needs the access token the printed link carries; the page does not.
    @Test func listeningBeyondLoopbackNeedsTheTokenThePrintedLinkCarries() async throws {
        let database = TemporaryDatabase()
        let (server, port) = try await TimetrackProcess.serve(["--host", "0.0.0.0", "--db", database.path])
        let token = try #require(server.output.firstMatch(of: #/#token=([a-z0-9-]+)/#)?.1)
        #expect(server.errors.contains("requests need the access token"))
        #expect(try Self.get("/api/projects", port: port).hasPrefix("HTTP/1.1 401"))
        #expect(try Self.get("/api/projects", port: port, headers: "Authorization: Bearer \(token)\r\n").hasPrefix("HTTP/1.1 200"))
        #expect(try Self.get("/", port: port).hasPrefix("HTTP/1.1 200"))
        server.signal(SIGINT)
        #expect(server.waitForExit() == 0)
    }

    /// An IPv6 address is printed in brackets (`http://[::1]:PORT/`), as a browser needs it.
    @Test func anIPv6AddressIsPrintedInBrackets() async throws {
        let database = TemporaryDatabase()
        let (server, _) = try await TimetrackProcess.serve(["--host", "::1", "--db", database.path])
        #expect(server.output.contains("timetrack is serving http://[::1]:"))
        server.signal(SIGINT)
        #expect(server.waitForExit() == 0)
    }

    /// A body sent one byte at a time must arrive within the idle timeout: connections that trickle their bodies in do
    /// not hold the server (with every connection taken so, nobody else would get an answer for as long as the bodies
    /// last).
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
        // A window for the two requests to reach the server before the visitor's.
        try await Task.sleep(for: .milliseconds(500))
        let visitor = try RawConnection(port: port)
        visitor.send("GET /api/projects HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n\r\n")
        var answer = ""
        // Sixty times the idle timeout: the server has had every chance to drop the two that never finish.
        let deadline = ContinuousClock.now + .seconds(60)
        while answer.isEmpty, ContinuousClock.now < deadline {
            for connection in slow { connection.send(" ") }
            answer = visitor.receive(timeout: .milliseconds(500))
        }
        #expect(answer.hasPrefix("HTTP/1.1 200"), "no answer in 60 s while two bodies trickled in")
        server.signal(SIGINT)
        _ = server.waitForExit()
    }

    /// Event streams whose readers never read (their socket buffers full, every write waiting) do not keep the server
    /// from stopping at SIGTERM.
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
        try processSpawning.withLock { try server.run() }
        defer { if server.isRunning { kill(server.processIdentifier, SIGKILL) } }
        var port: Int?
        _ = await eventually {
            let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            port = text.firstMatch(of: #/127\.0\.0\.1:(\d+)/#).flatMap { Int($0.1) }
            return port != nil
        }
        let serverPort = try #require(port)
        let readers = try (0..<3).map { _ in try RawConnection(port: serverPort) }
        for reader in readers { reader.send("GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:\(serverPort)\r\n\r\n") }
        // A window for the three streams to start before the changes that fill their buffers.
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
        let stopped = await eventually { !server.isRunning }
        #expect(stopped, "still running a minute after SIGTERM, with three event streams that do not read")
        _ = readers
    }
}
