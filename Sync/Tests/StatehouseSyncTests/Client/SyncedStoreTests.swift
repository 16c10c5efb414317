import Foundation
import Statehouse
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// A synced store works at once and offline, and ends with the server's state, every action applied once.
@Suite struct SyncedStoreTests {
    private func synced(
        _ server: URL, outbox: URL = Fixture.temporaryFolder(), token: String = Fixture.writer
    ) throws -> SyncedStore<Tracker, TrackerAction> {
        try SyncedStore(
            name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server, token: token, outbox: outbox
        )
    }

    @Test func aDispatchAppliesAtOnceAndReachesTheServer() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let synced = try synced(server.url)
            synced.store.dispatch(.add("writing"))
            #expect(synced.store.state.entries == ["writing"])
            #expect(await eventually { synced.status == .synced })
            #expect(try await server.snapshot(client: "x").state.entries == ["writing"])
        }
    }

    /// Two clients dispatching at once, each its own entries: both end with the server's state, which holds every
    /// entry once, each client's in the order it dispatched them.
    @Test func twoClientsDispatchingAtOnceConvergeOnTheServersState() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let a = try synced(server.url)
            let b = try synced(server.url)
            await withTaskGroup(of: Void.self) { group in
                for (name, client) in [("a", a), ("b", b)] {
                    group.addTask {
                        for index in 0..<50 { client.store.dispatch(.add("\(name)\(index)")) }
                    }
                }
            }
            #expect(await eventually { a.status == .synced && b.status == .synced && a.store.state == b.store.state })
            let state = try await server.snapshot(client: "x").state
            #expect(a.store.state == state)
            #expect(state.entries.filter { $0.hasPrefix("a") } == (0..<50).map { "a\($0)" })
            #expect(state.entries.filter { $0.hasPrefix("b") } == (0..<50).map { "b\($0)" })
        }
    }

    /// A client's subscriber hears another client's action: the feed brings it.
    @Test func anotherClientsActionReachesThisClientsSubscribers() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let a = try synced(server.url)
            let b = try synced(server.url)
            let heard = Recorder<Int>()
            let token = b.store.subscribe(\.total) { heard.append($0) }
            defer { token.cancel() }
            a.store.dispatch(.count(42))
            #expect(await eventually { heard.elements.last == 42 })
        }
    }

    /// An app follows as many stores of one server as it has, each on a connection of its own for as long as it
    /// follows: a twelfth hears another's action as the first does.
    @Test func manyStoresOfOneAppFollowOneServerAtOnce() async throws {
        let syncServer = try Fixture.server()
        try await withRunningServer(syncServer) { server async throws in
            let stores = try (0..<12).map { _ in try synced(server.url) }
            #expect(await eventually(timeout: .seconds(60)) { syncServer.followerCounts["tracker"] == stores.count })
            stores[0].store.dispatch(.count(7))
            for store in stores {
                #expect(await eventually { store.store.state.total == 7 })
            }
        }
    }

    /// A program that runs once pulls the server's state rather than wait for the feed: once `pull` returns, the
    /// store shows it, with its own pending actions on top; a server that cannot be reached throws and changes
    /// nothing.
    @Test func aPullShowsTheServersStateWithThePendingActionsOnTop() async throws {
        let storage = try SyncServerStorage.inMemory()
        let outbox = Fixture.temporaryFolder()
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            _ = try await server.push(client: "another-app", [(1, .add("theirs"))])
            return server.port
        }
        let synced = try synced(URL(string: "http://127.0.0.1:\(port)/")!, outbox: outbox)
        synced.store.dispatch(.add("mine"))
        await #expect(throws: SyncError.self) { try await synced.pull() }
        #expect(synced.store.state.entries == ["mine"])
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            _ = server
            try await synced.pull()
            #expect(synced.store.state.entries == ["theirs", "mine"])
        }
    }

    /// Offline, a thousand actions apply locally and wait; once the server is back they are pushed and applied
    /// once each.
    @Test func aClientOfflineForAThousandActionsCatchesUpOnceTheServerIsBack() async throws {
        let storage = try SyncServerStorage.inMemory()
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { $0.port }
        let synced = try synced(URL(string: "http://127.0.0.1:\(port)/")!)
        for _ in 0..<1_000 { synced.store.dispatch(.count(1)) }
        #expect(synced.store.state.total == 1_000)
        #expect(await eventually {
            if case .offline = synced.status { true } else { false }
        })
        #expect(synced.pendingCount == 1_000)
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            synced.syncNow()
            #expect(await eventually { synced.status == .synced })
            let snapshot = try await server.snapshot(client: "x")
            #expect(snapshot.state.total == 1_000 && snapshot.cursor == 1_000)
            #expect(synced.store.state == snapshot.state)
        }
    }

    /// An app offline past its outbox's limit is told so, and its next actions are not applied (nothing already
    /// queued is dropped); once the server takes the outbox, actions apply again.
    @Test func anOutboxAtItsLimitRefusesNewActionsAndSaysSo() async throws {
        let storage = try SyncServerStorage.inMemory()
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { $0.port }
        let synced = try SyncedStore(
            name: "tracker", initialState: Tracker(), reducer: trackerReducer,
            server: URL(string: "http://127.0.0.1:\(port)/")!, token: Fixture.writer, outbox: Fixture.temporaryFolder(),
            outboxLimit: 5
        )
        for _ in 0..<8 { synced.store.dispatch(.count(1)) }
        #expect(synced.store.state.total == 5)
        #expect(synced.pendingCount == 5)
        #expect(synced.status == .failed(.outboxFull(limit: 5)))
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            synced.syncNow()
            #expect(await eventually { synced.status == .synced })
            synced.store.dispatch(.count(10))
            #expect(synced.store.state.total == 15)
            #expect(await eventually { synced.status == .synced })
            #expect(try await server.snapshot(client: "x").state.total == 15)
        }
    }

    /// Two clients change the same thing offline; once online both show the server's state, which applied each
    /// client's actions on top of the other's.
    @Test func conflictingOfflineChangesConvergeToTheServersState() async throws {
        let storage = try SyncServerStorage.inMemory()
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { $0.port }
        let url = URL(string: "http://127.0.0.1:\(port)/")!
        let a = try synced(url)
        let b = try synced(url)
        a.store.dispatch(.add("from a"))
        a.store.dispatch(.count(1))
        b.store.dispatch(.add("from b"))
        b.store.dispatch(.count(10))
        #expect(a.store.state.total == 1 && b.store.state.total == 10)
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            a.syncNow()
            b.syncNow()
            #expect(await eventually { a.status == .synced && b.status == .synced && a.store.state == b.store.state })
            let state = try await server.snapshot(client: "x").state
            #expect(state.total == 11 && Set(state.entries) == ["from a", "from b"])
            #expect(a.store.state == state)
        }
    }

    @Test func aRefusedActionIsReportedAndLeavesTheState() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let synced = try synced(server.url)
            synced.store.dispatch(.add("kept"))
            synced.store.dispatch(.forbidden)
            synced.store.dispatch(.impossible)
            #expect(await eventually {
                if case .refused(let refusals) = synced.status { refusals.map(\.seq) == [2, 3] } else { false }
            })
            guard case .refused(let refusals) = synced.status else { return }
            #expect(refusals[0].reason == "forbidden here" && refusals[0].action == "forbidden")
            #expect(await eventually { synced.pendingCount == 0 && synced.store.state.entries == ["kept"] })
        }
    }

    /// A refusal stays in the status, with those after it, until the app says it has shown them: the next push's
    /// answer, coming before anyone looked, does not hide it.
    @Test func aRefusalStaysUntilTheAppAcknowledgesIt() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let synced = try synced(server.url)
            synced.store.dispatch(.forbidden)
            #expect(await eventually {
                if case .refused(let refusals) = synced.status { refusals.map(\.seq) == [1] } else { false }
            })
            synced.store.dispatch(.add("after"))
            #expect(await eventually { synced.pendingCount == 0 })
            #expect(try await server.snapshot(client: "x").state.entries == ["after"])
            synced.store.dispatch(.impossible)
            #expect(await eventually {
                if case .refused(let refusals) = synced.status { refusals.map(\.seq) == [1, 3] } else { false }
            })
            synced.acknowledgeRefusals()
            #expect(await eventually { synced.status == .synced })
        }
    }

    /// The outbox outlives the process: a synced store made again on it starts with the actions and the state the
    /// last one left, and pushes them once.
    @Test func theOutboxOutlivesItsStore() async throws {
        let storage = try SyncServerStorage.inMemory()
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { $0.port }
        let url = URL(string: "http://127.0.0.1:\(port)/")!
        let outbox = Fixture.temporaryFolder()
        do {
            let first = try synced(url, outbox: outbox)
            first.store.dispatch(.add("before the restart"))
            try first.flush()
        }
        // The first store's loops end soon after it goes, and let the outbox go with its journal.
        var reopened: SyncedStore<Tracker, TrackerAction>?
        #expect(await eventually { reopened = try? synced(url, outbox: outbox); return reopened != nil })
        let second = try #require(reopened)
        #expect(second.store.state.entries == ["before the restart"])
        #expect(second.pendingCount == 1)
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            second.syncNow()
            #expect(await eventually { second.status == .synced })
            #expect(try await server.snapshot(client: "x").state.entries == ["before the restart"])
        }
    }

    @Test func anOutboxInUseIsRefused() throws {
        let outbox = Fixture.temporaryFolder()
        let first = try synced(URL(string: "http://127.0.0.1:9/")!, outbox: outbox)
        #expect(throws: SyncError.outboxInUse(path: outbox.path)) {
            try synced(URL(string: "http://127.0.0.1:9/")!, outbox: outbox)
        }
        withExtendedLifetime(first) {}
    }

    @Test func anUnknownTokenFailsTheSyncAndKeepsTheActions() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let synced = try synced(server.url, token: Fixture.unknown)
            synced.store.dispatch(.count(1))
            #expect(await eventually {
                if case .failed(.refusedByServer(status: 401, _)) = synced.status { true } else { false }
            })
            #expect(synced.pendingCount == 1 && synced.store.state.total == 1)
        }
    }

    /// Synced stores that come and go leave no open files behind once their loops ended and their outbox lock went.
    @Test func releasedSyncedStoresLeaveNoOpenFiles() async throws {
        func openFiles() -> Int { (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0 }
        try await withRunningServer(try Fixture.server()) { server async throws in
            func round(_ index: Int) async throws {
                let outbox = Fixture.temporaryFolder()
                do {
                    let store = try synced(server.url, outbox: outbox)
                    store.store.dispatch(.add("\(index)"))
                    #expect(await eventually { store.status == .synced })
                }
                #expect(await eventually { (try? OutboxLock(folder: outbox, name: "tracker")) != nil })
            }
            try await round(-1)
            let before = openFiles()
            for index in 0..<20 { try await round(index) }
            let settled = await eventually(timeout: .seconds(60)) { openFiles() <= before + 4 }
            #expect(settled, "open files: \(before) before 20 synced stores came and went, \(openFiles()) after")
        }
    }
}
