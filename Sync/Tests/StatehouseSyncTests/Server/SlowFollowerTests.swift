import Foundation
import StatehouseServer
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// A feed whose client stopped reading (a phone gone from the network without closing the connection, a stalled
/// proxy) holds the server up neither while it runs nor when it stops: the connection is dropped, and the client
/// resumes by cursor when it comes back.
@Suite struct SlowFollowerTests {
    /// Follows with a client that never reads, then pushes `events` changes, enough to fill both sockets' buffers
    /// unless told fewer.
    private func stallAFeed(
        _ server: RunningServer, _ syncServer: SyncServer, events: Int64 = 40, eventSize: Int = 100_000
    ) async throws -> RawConnection {
        // A small receive buffer, so that a few large events fill it.
        let follower = try RawConnection(port: server.port, receiveBuffer: 4_096)
        follower.send(
            "GET /stores/tracker/events?client=stalled HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                + "Authorization: Bearer \(Fixture.writer)\r\nAccept: text/event-stream\r\n\r\n"
        )
        #expect(await eventually { syncServer.followerCounts["tracker"] == 1 })
        let entry = String(repeating: "x", count: eventSize)
        for seq in 1...events {
            #expect(try await server.push(client: "pusher", [(seq, .add(entry))]).status == 200)
        }
        return follower
    }

    /// Stops `server`; whether it stopped within a minute. One that did not is left stopping.
    private func stops(_ server: RunningServer) async -> Bool {
        let stopped = Cell(false)
        let stopping = Task {
            await server.stop()
            stopped.value = true
        }
        guard await eventually(timeout: .seconds(60), { stopped.value }) else { return false }
        await stopping.value
        return true
    }

    @Test func aGracefulShutdownDoesNotWaitForAFeedWhoseClientStoppedReading() async throws {
        let syncServer = try Fixture.server()
        let server = try await RunningServer.start(syncServer)
        let follower = try await stallAFeed(server, syncServer)
        #expect(await stops(server), "the shutdown waits for the stalled feed")
        withExtendedLifetime(follower) {}
    }

    /// The response's end, written once a stopping server has ended the feed, waits for a stalled socket as any write
    /// does, and the shutdown's second cuts it too. It waits when the write before it filled the connection's buffer
    /// and nothing came after: each round stalls the feed after one event more, to meet that moment.
    @Test func aShutdownDoesNotWaitForTheEndOfAFeedWhoseClientStoppedReading() async throws {
        for events in Int64(1)...8 {
            let syncServer = try Fixture.server()
            let server = try await RunningServer.start(syncServer)
            let follower = try await stallAFeed(server, syncServer, events: events, eventSize: 400_000)
            #expect(await stops(server), "the shutdown waits for the end of a feed stalled after \(events) events")
            withExtendedLifetime(follower) {}
        }
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
