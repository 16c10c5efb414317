import Foundation
import Statehouse
import StatehouseServer
import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// Batches fit the server's limits: capped by size as well as by count, and halved while the server answers 413.
/// An action too large for the server on its own is a failure the status names, never a silent drop.
@Suite struct BatchSizeTests {
    private func synced(_ server: URL) throws -> SyncedStore<Tracker, TrackerAction> {
        try SyncedStore(
            name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server, token: Fixture.writer,
            outbox: Fixture.temporaryFolder()
        )
    }

    /// 500 actions of 9 kB wait offline: 4.5 MB together, more than the server's default 4 MiB body.
    @Test func anOutboxOfLargeActionsSyncsUnderTheDefaultLimits() async throws {
        let storage = try SyncServerStorage.inMemory()
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { $0.port }
        let synced = try synced(URL(string: "http://127.0.0.1:\(port)/")!)
        let entry = String(repeating: "x", count: 9_000)
        for index in 0..<500 { synced.store.dispatch(.add("\(index) \(entry)")) }
        #expect(await eventually { if case .offline = synced.status { true } else { false } })
        try await withRunningServer(try Fixture.server(storage: storage), port: port) { server async throws in
            synced.syncNow()
            #expect(await eventually(timeout: .seconds(60)) { synced.status == .synced })
            #expect(try await server.snapshot(client: "observer").state.entries.count == 500)
        }
    }

    /// A server whose body limit is far below the client's batch size: the client halves its batches until they
    /// fit.
    @Test func batchesShrinkToAServersSmallerBodyLimit() async throws {
        let server = try Fixture.server(limits: SyncLimits(maximumBody: 64 << 10))
        try await withRunningServer(server) { server async throws in
            let synced = try synced(server.url)
            let entry = String(repeating: "y", count: 4_000)
            for index in 0..<60 { synced.store.dispatch(.add("\(index) \(entry)")) }
            #expect(await eventually(timeout: .seconds(60)) { synced.status == .synced })
            #expect(try await server.snapshot(client: "observer").state.entries.count == 60)
        }
    }

    /// One action larger than the server's body limit: those before it sync, it stays in the outbox with those
    /// after it, and the status says why.
    @Test func anActionLargerThanTheServerAcceptsIsAFailureNotADrop() async throws {
        let server = try Fixture.server(limits: SyncLimits(maximumBody: 64 << 10))
        try await withRunningServer(server) { server async throws in
            let synced = try synced(server.url)
            synced.store.dispatch(.add("before"))
            synced.store.dispatch(.add(String(repeating: "z", count: 100_000)))
            synced.store.dispatch(.add("after"))
            let failed = await eventually(timeout: .seconds(60)) {
                if case .failed(.refusedByServer(status: 413, _)) = synced.status { true } else { false }
            }
            #expect(failed, "status: \(String(describing: synced.status).prefix(300))")
            #expect(await eventually { synced.pendingCount == 2 })
            #expect(synced.store.state.entries.count == 3)
            #expect(try await server.snapshot(client: "observer").state.entries == ["before"])
        }
    }
}
