import Foundation
import Statehouse
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Synchronization
import Testing

/// A store whose authoritative state the app keeps itself (its own database, which its other programs change too):
/// pushes go through the app's reducer into the app's copy, a change made by other means reaches the followers once
/// announced, and a state changed while the server was down is sent to a feed that resumes.
@Suite struct AppKeptStateTests {
    /// The app's own copy, as its database would be: an action is one transaction, all of it or nothing.
    final class AppDatabase: Sendable {
        let contents = Mutex(Tracker())

        func apply(_ action: TrackerAction) throws -> Tracker {
            try contents.withLock { contents in
                var changed = contents
                try serverReducer(&changed, action)
                contents = changed
                return contents
            }
        }
    }

    private func server(_ database: AppDatabase, storage: SyncServerStorage? = nil) throws -> SyncServer {
        let server = SyncServer(storage: try storage ?? .inMemory(), tokens: try Fixture.tokens())
        server.host(
            store: "tracker", keptBy: { database.contents.withLock { $0 } },
            reducer: { (state: inout Tracker, action: TrackerAction) in state = try database.apply(action) }
        )
        return server
    }

    @Test func aPushIsAppliedToTheAppsCopy() async throws {
        let database = AppDatabase()
        try await withRunningServer(try server(database)) { server async throws in
            let answer = try await server.push([(1, .add("writing")), (2, .impossible)])
            #expect(answer.status == 200)
            #expect(database.contents.withLock { $0.entries } == ["writing"])
            #expect(try await server.snapshot().state.entries == ["writing"])
            #expect(try answer.decoded(PushAnswer.self).refused.map(\.seq) == [2])
        }
    }

    /// A change the app made by other means reaches a synced store once the server is told; telling it again with
    /// nothing changed sends nothing (the cursor stays).
    @Test func aChangeMadeElsewhereReachesTheFollowersOnceAnnounced() async throws {
        let database = AppDatabase()
        let syncServer = try server(database)
        try await withRunningServer(syncServer) { server async throws in
            let synced = try SyncedStore(
                name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server.url,
                token: Fixture.writer, outbox: Fixture.temporaryFolder()
            )
            synced.store.dispatch(.add("from the app"))
            #expect(await eventually { synced.status == .synced })
            database.contents.withLock { $0.entries.append("from another program") }
            syncServer.stateChanged(store: "tracker")
            #expect(await eventually { synced.store.state.entries == ["from the app", "from another program"] })
            let cursor = try await server.snapshot().cursor
            syncServer.stateChanged(store: "tracker")
            _ = try await server.push(client: "client-b", [(1, .count(1))])
            #expect(try await server.snapshot().cursor == cursor + 1, "the unchanged state was not a change")
            #expect(await eventually { synced.store.state.total == 1 })
        }
    }

    /// The app's state changed while the server was down: the restarted server gives it the next cursor, so a feed
    /// resumed at the cursor it saw gets the state now rather than nothing.
    @Test func aStateChangedWhileTheServerWasDownIsSentToAResumedFeed() async throws {
        let database = AppDatabase()
        let path = Fixture.temporaryFolder().appendingPathComponent("sync.sqlite").path
        let seen = try await withRunningServer(try server(database, storage: .sqlite(path: path))) { server async throws in
            _ = try await server.push([(1, .add("writing"))])
            return try await server.snapshot().cursor
        }
        database.contents.withLock { $0.entries.append("while the server was down") }
        try await withRunningServer(try server(database, storage: .sqlite(path: path))) { server async throws in
            var events = SyncConnection(server: server.url, store: "tracker", token: Fixture.writer)
                .feed(client: "client-a", after: seen).makeAsyncIterator()
            var first = try await events.next()
            if first == .opened { first = try await events.next() }
            let event = try #require(first)
            #expect(event.name == "snapshot" && event.id == "\(seen + 1)")
            #expect(event.data.contains("while the server was down"))
            #expect(try await server.snapshot().handledThrough == 1, "the client's numbers are kept")
        }
    }

    /// A reducer that cannot apply an action now (the app's database is locked) throws `SyncUnavailable`: the push
    /// is answered 503 and counts for nothing, and pushed again it is applied once.
    @Test func anActionTheAppCannotApplyNowIsPushedAgainNotRefused() async throws {
        let database = AppDatabase()
        let locked = Mutex(true)
        let server = SyncServer(storage: try .inMemory(), tokens: try Fixture.tokens())
        server.host(
            store: "tracker", keptBy: { database.contents.withLock { $0 } },
            reducer: { (state: inout Tracker, action: TrackerAction) in
                if locked.withLock({ $0 }) { throw SyncUnavailable("the database is locked") }
                state = try database.apply(action)
            }
        )
        try await withRunningServer(server) { running async throws in
            let unavailable = try await running.push([(1, .add("writing"))])
            #expect(unavailable.status == 503)
            #expect(try await running.snapshot().handledThrough == 0)
            locked.withLock { $0 = false }
            let answer = try await running.push([(1, .add("writing"))])
            #expect(answer.status == 200)
            #expect(try answer.decoded(PushAnswer.self).refused.isEmpty)
            #expect(database.contents.withLock { $0.entries } == ["writing"])
        }
    }

    @Test func theServerListsThePushingClients() async throws {
        let database = AppDatabase()
        let syncServer = try server(database)
        try await withRunningServer(syncServer) { server async throws in
            let before = Date()
            _ = try await server.push([(1, .add("a")), (2, .add("b"))])
            _ = try await server.push(client: "client-b", [(1, .add("c"))], token: Fixture.secondWriter)
            let clients = try syncServer.clients(of: "tracker")
            #expect(Set(clients.map(\.name)) == ["client-a", "client-b"])
            #expect(clients.first { $0.name == "client-a" }?.handledThrough == 2)
            #expect(clients.allSatisfy { $0.lastPush.timeIntervalSince(before) > -1 })
            #expect(try syncServer.clients(of: "no such store").isEmpty)
        }
    }
}
