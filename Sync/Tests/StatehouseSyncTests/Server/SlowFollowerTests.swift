import Foundation
import StatehouseServer
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A feed whose client stopped reading (a phone gone from the network without closing the connection, a stalled
/// proxy) holds the server up neither while it runs nor when it stops: the connection is dropped, and the client
/// resumes by cursor when it comes back.
@Suite struct SlowFollowerTests {
    /// A raw connection that asks for the feed and never reads it, with a small receive buffer so that a few large
    /// events fill it.
    private final class StalledFollower: Sendable {
        let socket: Int32

        init(port: Int) throws {
            socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var small: Int32 = 4_096
            setsockopt(socket, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(socket)
                throw POSIXError(.ECONNREFUSED)
            }
            let request = "GET /stores/tracker/events?client=stalled HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Bearer \(Fixture.writer)\r\nAccept: text/event-stream\r\n\r\n"
            _ = request.withCString { send(socket, $0, strlen($0), 0) }
        }

        deinit {
            close(socket)
        }
    }

    /// Follows with a client that never reads, then pushes changes large enough to fill both sockets' buffers.
    private func stallAFeed(_ server: RunningServer, _ syncServer: SyncServer) async throws -> StalledFollower {
        let follower = try StalledFollower(port: server.port)
        #expect(await eventually { syncServer.followerCounts["tracker"] == 1 })
        let entry = String(repeating: "x", count: 100_000)
        for seq in Int64(1)...40 {
            #expect(try await server.push(client: "pusher", [(seq, .add(entry))]).status == 200)
        }
        return follower
    }

    @Test func aGracefulShutdownDoesNotWaitForAFeedWhoseClientStoppedReading() async throws {
        let syncServer = try Fixture.server()
        let server = try await RunningServer.start(syncServer)
        let follower = try await stallAFeed(server, syncServer)
        let stopped = Cell(false)
        let stopping = Task {
            await server.stop()
            stopped.value = true
        }
        #expect(await eventually(timeout: .seconds(60)) { stopped.value }, "the shutdown waits for the stalled feed")
        withExtendedLifetime(follower) {}
        await stopping.value
    }

    /// A write that waits for two heartbeats ends the feed, and the store lets its follower go.
    @Test func aFeedWhoseClientStoppedReadingIsDroppedAfterTwoHeartbeats() async throws {
        let syncServer = try Fixture.server(limits: SyncLimits(heartbeat: .seconds(1)))
        try await withRunningServer(syncServer) { server async throws in
            let follower = try await stallAFeed(server, syncServer)
            #expect(await eventually(timeout: .seconds(60)) { syncServer.followerCounts["tracker"] == 0 })
            withExtendedLifetime(follower) {}
        }
    }
}
