import Foundation
import Testing
import TimeTrackerTestSupport

/// `serve` against clients that do not play along (issue 11). Slower than the rest: each opens hundreds of
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

    // Issue 11: 1,000 half-sent requests stayed open forever.
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

    // Issue 11: under `ulimit -n 256`, 300 half-sent requests crashed the server (SIGILL in libdispatch).
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

    // Issue 11: `serve --host` beyond loopback answered anyone on the network.
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

    // Issue 11: `--host ::1` printed http://::1:PORT/, which no browser opens.
    @Test func anIPv6AddressIsPrintedInBrackets() async throws {
        let database = TemporaryDatabase()
        let (server, _) = try await TimetrackProcess.serve(["--host", "::1", "--db", database.path])
        #expect(server.output.contains("timetrack is serving http://[::1]:"))
        server.signal(SIGINT)
        #expect(server.waitForExit() == 0)
    }
}
