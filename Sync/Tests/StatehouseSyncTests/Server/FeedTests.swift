import Foundation
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// A store's feed starts with a snapshot, sends a change after every push that applied something, and resumes
/// from `Last-Event-ID` missing nothing and repeating nothing.
@Suite struct FeedTests {
    private func feed(_ server: RunningServer, after lastEventID: Int64? = nil) -> AsyncThrowingStream<ServerSentEvent, any Error>.AsyncIterator {
        SyncConnection(server: server.url, store: "tracker", token: Fixture.writer)
            .feed(client: "client-a", after: lastEventID).makeAsyncIterator()
    }

    /// The next event of the stream that is not the opening marker.
    private func next(_ events: inout AsyncThrowingStream<ServerSentEvent, any Error>.AsyncIterator) async throws -> ServerSentEvent? {
        while let event = try await events.next() {
            if event != .opened { return event }
        }
        return nil
    }

    @Test func aNewFeedStartsWithASnapshotThenSendsEachChange() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            _ = try await server.push([(1, .count(1))])
            var events = feed(server)
            let snapshot = try #require(try await next(&events))
            #expect(snapshot.name == "snapshot" && snapshot.id == "1")
            #expect(try JSONDecoder().decode(StoreSnapshot<Tracker>.self, from: Data(snapshot.data.utf8)).handledThrough == 1)
            _ = try await server.push(client: "client-b", [(1, .count(2))])
            _ = try await server.push([(2, .count(3))])
            let first = try #require(try await next(&events))
            let second = try #require(try await next(&events))
            #expect(first.name == "change" && first.id == "2")
            #expect(second.name == "change" && second.id == "3")
            let change = try JSONDecoder().decode(StoreChange<Tracker>.self, from: Data(second.data.utf8))
            #expect(change.state.total == 6 && change.handledThrough == 2)
        }
    }

    /// A change tells how far it handled the pushing client's actions to that client's feeds only: other followers
    /// learn neither its name nor its numbers.
    @Test func aChangeTellsOnlyThePushingClientHowFarItsActionsAreHandled() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            var own = feed(server)
            var other = SyncConnection(server: server.url, store: "tracker", token: Fixture.writer)
                .feed(client: "client-b", after: nil).makeAsyncIterator()
            #expect(try await next(&own)?.name == "snapshot")
            #expect(try await next(&other)?.name == "snapshot")
            _ = try await server.push([(1, .count(1))])
            let mine = try #require(try await next(&own))
            let theirs = try #require(try await next(&other))
            #expect(try JSONDecoder().decode(StoreChange<Tracker>.self, from: Data(mine.data.utf8)).handledThrough == 1)
            #expect(try JSONDecoder().decode(StoreChange<Tracker>.self, from: Data(theirs.data.utf8)).handledThrough == nil)
            #expect(!theirs.data.contains("client-a") && !theirs.data.contains("handledThrough"), "\(theirs.data)")
        }
    }

    /// Resumed at the cursor it last saw, a feed sends no snapshot, only what came after.
    @Test func aFeedResumedAtTheCurrentCursorRepeatsNothing() async throws {
        let syncServer = try Fixture.server()
        try await withRunningServer(syncServer) { server async throws in
            _ = try await server.push([(1, .count(1)), (2, .count(1))])
            var events = feed(server, after: 2)
            // Pushed once the server follows for this feed: pushed before, the feed would rightly start with a
            // snapshot at 3.
            #expect(await eventually { syncServer.followerCounts["tracker"] == 1 })
            _ = try await server.push([(3, .count(1))])
            let event = try #require(try await next(&events))
            #expect(event.name == "change" && event.id == "3")
        }
    }

    /// Resumed behind, a feed starts with the state now: nothing it missed is lost.
    @Test func aFeedResumedBehindStartsWithTheStateNow() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            _ = try await server.push([(1, .count(1)), (2, .count(1)), (3, .count(1))])
            var events = feed(server, after: 1)
            let event = try #require(try await next(&events))
            #expect(event.name == "snapshot" && event.id == "3")
            #expect(try JSONDecoder().decode(StoreSnapshot<Tracker>.self, from: Data(event.data.utf8)).state.total == 3)
        }
    }

    /// A push that applied nothing (every action refused, or all handled already) sends no event.
    @Test func aPushThatAppliedNothingSendsNoChange() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            var events = feed(server)
            #expect(try await next(&events)?.name == "snapshot")
            _ = try await server.push([(1, .forbidden)])
            _ = try await server.push([(1, .forbidden)])
            _ = try await server.push([(2, .count(7))])
            let event = try #require(try await next(&events))
            #expect(event.id == "1")
            #expect(try JSONDecoder().decode(StoreChange<Tracker>.self, from: Data(event.data.utf8)).state.total == 7)
        }
    }

    @Test func aBadLastEventIDIsABadRequest() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            #expect(try await server.request("GET", "stores/tracker/events?client=a&since=-1").status == 400)
            #expect(try await server.request("GET", "stores/tracker/events?client=a&since=x").status == 400)
            #expect(try await server.request("GET", "stores/tracker/events").status == 400)
        }
    }
}
