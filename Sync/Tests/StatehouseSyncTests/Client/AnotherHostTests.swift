import Foundation
import Statehouse
import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// Apps reach a server on another host across a real network (a network namespace joined by a virtual Ethernet
/// pair: its own stack, routes and addresses), work on while the link is down, and converge once it is back.
@Suite(.serialized, .enabled(if: NetworkNamespace.available, "needs root and iproute2 to make a second host"))
struct AnotherHostTests {
    @Test func twoAppsSyncWithAServerOnAnotherHostAcrossALinkThatGoesDown() async throws {
        let host = try NetworkNamespace()
        let folder = Fixture.temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try HelperProcess(
            "StatehouseSyncServerWorker", [folder.appendingPathComponent("s.sqlite").path, "0", host.guestAddress],
            namespace: host.name
        )
        let listening = try #require(await server.line { $0.hasPrefix("listening") }, "\(server.lines)")
        let url = try #require(URL(string: "http://\(host.guestAddress):\(listening.split(separator: " ")[1])/"))
        func app(_ name: String) throws -> SyncedStore<Tracker, TrackerAction> {
            try SyncedStore(
                name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: url, token: Fixture.writer,
                outbox: folder.appendingPathComponent(name)
            )
        }
        let a = try app("a")
        let b = try app("b")
        for index in 0..<10 { a.store.dispatch(.add("a\(index)")) }
        #expect(await eventually(timeout: .seconds(60)) { b.store.state.entries.count == 10 && a.status == .synced })

        try host.setLink(up: false)
        for index in 10..<30 { a.store.dispatch(.add("a\(index)")) }
        for index in 0..<5 { b.store.dispatch(.add("b\(index)")) }
        let offline = await eventually(timeout: .seconds(60)) {
            if case .offline = a.status { true } else { false }
        }
        #expect(offline, "a: \(a.status)")
        #expect(a.store.state.entries.count == 30 && b.store.state.entries.count == 15)

        try host.setLink(up: true)
        a.syncNow()
        b.syncNow()
        let converged = await eventually(timeout: .seconds(120)) {
            a.status == .synced && b.status == .synced && a.store.state == b.store.state
                && a.store.state.entries.count == 35
        }
        #expect(converged, "a: \(a.status) \(a.store.state.entries.count), b: \(b.status) \(b.store.state.entries.count)")
        #expect(a.store.state.entries.filter { $0.hasPrefix("a") } == (0..<30).map { "a\($0)" })
        #expect(a.store.state.entries.filter { $0.hasPrefix("b") } == (0..<5).map { "b\($0)" })
        server.kill()
    }
}
