import Foundation
import Statehouse
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// A server or an app killed (SIGKILL) while actions are pushed loses none of them and applies none twice.
@Suite struct KilledMidPushTests {
    /// A free port for a server that must come back on the same one: the system picks it for a server that then
    /// stops.
    private func freePort() async throws -> Int {
        try await withRunningServer(try Fixture.server()) { $0.port }
    }

    private func startServer(database: String, port: Int) async throws -> HelperProcess {
        let server = try HelperProcess("StatehouseSyncServerWorker", [database, String(port)])
        let listening = await server.line { $0.hasPrefix("listening") }
        try #require(listening != nil, "the server process did not start: \(server.lines)")
        return server
    }

    /// The server process is killed while an app pushes 300 actions, at a random moment after it applied some, then
    /// started again on the same database: the app ends synced, with every action applied once, in order.
    @Test(arguments: 0..<3)
    func aServerKilledMidPushAppliesEveryActionOnce(round: Int) async throws {
        let folder = Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let database = folder.appendingPathComponent("server.sqlite").path
        let port = try await freePort()
        let url = URL(string: "http://127.0.0.1:\(port)/")!
        var server = try await startServer(database: database, port: port)
        let synced = try SyncedStore(
            name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: url, token: Fixture.writer,
            outbox: folder.appendingPathComponent("outbox")
        )
        for index in 0..<300 { synced.store.dispatch(.add(String(index))) }
        #expect(await eventually { synced.pendingCount < 300 })
        usleep(UInt32.random(in: 0...20_000))  // a random instant to kill it at, not a wait for a signal
        server.kill()
        _ = await server.exitStatus()
        server = try await startServer(database: database, port: port)
        synced.syncNow()
        #expect(await eventually { synced.status == .synced })
        let expected = (0..<300).map(String.init)
        #expect(synced.store.state.entries == expected)
        let snapshot = try await SyncConnection(server: url, store: "tracker", token: Fixture.writer)
            .pull(client: "observer", as: Tracker.self)
        #expect(snapshot.state.entries == expected && snapshot.cursor == 300)
        server.kill()
    }

    /// An app process is killed while it dispatches, flushes and pushes, then run again on the same outbox: the
    /// server ends with every action it flushed (and perhaps a few it had not yet said were flushed), each once, in
    /// order.
    @Test(arguments: 0..<3)
    func anAppKilledMidPushLosesNoFlushedActionAndRepeatsNone(round: Int) async throws {
        let storage = try SyncServerStorage.inMemory()
        try await withRunningServer(try Fixture.server(storage: storage)) { server async throws in
            let outbox = Fixture.temporaryFolder()
            defer { try? FileManager.default.removeItem(at: outbox) }
            let app = try HelperProcess("StatehouseSyncClientWorker", [server.url.absoluteString, outbox.path, "300"])
            let started = await app.line { $0 == "flushed 20" }
            try #require(started != nil, "the app did not start: \(app.lines)")
            usleep(UInt32.random(in: 0...20_000))  // a random instant to kill it at, not a wait for a signal
            app.kill()
            #expect(await app.exitStatus() == nil, "the app ended by itself before it was killed")
            let flushed = app.lines.compactMap { $0.hasPrefix("flushed ") ? Int($0.dropFirst(8)) : nil }.max() ?? -1
            let again = try HelperProcess("StatehouseSyncClientWorker", [server.url.absoluteString, outbox.path, "0"])
            #expect(await again.exitStatus() == 0, "the app run again did not sync: \(again.lines)")
            let entries = try await server.snapshot(client: "observer").state.entries
            #expect(entries.count > flushed)
            #expect(entries == (0..<entries.count).map(String.init))
        }
    }
}
