import Foundation
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// Every route but `/openapi.json` needs a token, and a token reaches only the stores it was granted.
@Suite struct AccessTests {
    @Test func noTokenOrAnUnknownOneIs401() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            for token in [nil, Fixture.unknown, ""] {
                let answer = try await server.request("GET", "stores/tracker?client=a", token: token)
                #expect(answer.status == 401)
                #expect(answer.headers["www-authenticate"] == "Bearer")
                let push = try await server.push([(1, .count(1))], token: token ?? "")
                #expect(push.status == 401)
            }
            #expect(try await server.snapshot().cursor == 0)
        }
    }

    @Test func aTokenOfAnotherStoreOrAReadOnlyOneThatPushesIs403() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            #expect(try await server.request("GET", "stores/tracker?client=a", token: Fixture.other).status == 403)
            #expect(try await server.request("GET", "stores/tracker/events?client=a", token: Fixture.other).status == 403)
            #expect(try await server.push([(1, .count(1))], token: Fixture.other).status == 403)
            #expect(try await server.push([(1, .count(1))], token: Fixture.reader).status == 403)
            #expect(try await server.request("GET", "stores/tracker?client=a", token: Fixture.reader).status == 200)
            #expect(try await server.snapshot().cursor == 0)
        }
    }

    /// A client's numbers are its own: another token that may push to the store, pushing under the client's name,
    /// would have the client's next action skipped as a replay. The client belongs to the token it first pushed
    /// with, also after a restart.
    @Test func anotherTokenCannotPushAsAClientItDidNotStart() async throws {
        let storage = try SyncServerStorage.sqlite(path: Fixture.temporaryFolder().appendingPathComponent("s.sqlite").path)
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            #expect(try await server.push([(1, .add("alice 1"))]).status == 200)
        }
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            let impersonated = try await server.push([(2, .add("mallory"))], token: Fixture.secondWriter)
            #expect(impersonated.status == 403)
            #expect(try impersonated.decoded(ErrorAnswer.self).error.contains("another token"))
            #expect(try await server.push([(2, .add("alice 2"))]).status == 200)
            #expect(try await server.push(client: "mallory", [(1, .add("m"))], token: Fixture.secondWriter).status == 200)
            #expect(try await server.snapshot().state.entries == ["alice 1", "alice 2", "m"])
        }
    }

    /// How far a client's actions are handled is told only to the token the client belongs to: another token that
    /// may read the store, naming the client, learns nothing of its numbers, in a snapshot or in the feed.
    @Test func aClientsNumbersAreToldOnlyToItsOwnToken() async throws {
        let syncServer = try Fixture.server()
        try await withRunningServer(syncServer) { server async throws in
            #expect(try await server.push(client: "c", [(1, .add("a")), (2, .add("b"))]).status == 200)
            let own = try await server.request("GET", "stores/tracker?client=c").decoded(StoreSnapshot<Tracker>.self)
            let other = try await server.request("GET", "stores/tracker?client=c", token: Fixture.reader)
                .decoded(StoreSnapshot<Tracker>.self)
            #expect(own.handledThrough == 2 && other.handledThrough == 0 && other.cursor == 2)
            var events = SyncConnection(server: server.url, store: "tracker", token: Fixture.reader)
                .feed(client: "c", after: 2).makeAsyncIterator()
            #expect(await eventually { syncServer.followerCounts["tracker"] == 1 })
            #expect(try await server.push(client: "c", [(3, .add("c"))]).status == 200)
            var change: ServerSentEvent?
            while change == nil, let event = try await events.next() {
                if event.name == FeedEvent.change { change = event }
            }
            let data = try #require(change?.data)
            #expect(try JSONDecoder().decode(StoreChange<Tracker>.self, from: Data(data.utf8)).handledThrough == nil)
        }
    }

    @Test func aStoreNotHostedIs404ForATokenThatMayReadEverything() async throws {
        let server = SyncServer(
            storage: try .inMemory(), tokens: try SyncTokens([.everything(name: "admin", token: Fixture.writer)])
        )
        try await withRunningServer(server) { server async throws in
            let answer = try await server.request("GET", "stores/nothing?client=a")
            #expect(answer.status == 404)
            #expect(try answer.decoded(ErrorAnswer.self).error.contains("nothing"))
        }
    }

    @Test func theProtocolsDocumentNeedsNoToken() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let answer = try await server.request("GET", "openapi.json", token: nil)
            #expect(answer.status == 200)
            let document = try JSONSerialization.jsonObject(with: answer.body) as? [String: Any]
            #expect(document?["openapi"] as? String == "3.1.0")
        }
    }

    @Test func aShortTokenOrABadDigestIsRefusedWhenTheServerIsMade() {
        #expect(throws: SyncServerError.weakToken("short")) {
            try SyncTokens([SyncGrant(name: "short", token: "0123456789")])
        }
        #expect(throws: SyncServerError.badDigest("bad")) {
            try SyncTokens(digests: [(hex: "abc", grant: SyncGrant(name: "bad", token: ""))])
        }
    }

    @Test func aTokenKnownByItsDigestOnlyIsAccepted() async throws {
        let tokens = try SyncTokens(digests: [
            (hex: SyncGrant.digestHex(of: Fixture.writer), grant: SyncGrant(name: "writer", token: "", stores: ["tracker": .readWrite]))
        ])
        let server = SyncServer(storage: try .inMemory(), tokens: tokens)
        server.host(store: "tracker", initialState: Tracker(), reducer: serverReducer)
        try await withRunningServer(server) { server async throws in
            #expect(try await server.push([(1, .count(1))]).status == 200)
            #expect(try await server.push([(2, .count(1))], token: Fixture.reader).status == 401)
        }
    }
}
