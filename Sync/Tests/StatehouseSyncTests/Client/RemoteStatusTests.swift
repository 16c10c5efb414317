import Foundation
import Statehouse
import StatehouseServer
@testable import StatehouseSync
import StatehouseTestSupport
import SyncFixtures
import Testing

/// A remote storage's status is exact once its writes settle: many threads writing while the pushes drain them never
/// leave it showing a write pending that the server holds.
@Suite struct RemoteStatusTests {
    @Test func writesFromManyThreadsSettleOnSynced() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let remote = try RemoteStorage(server: server.url, token: Fixture.writer, cache: Fixture.temporaryFolder())
            let values = try (0..<8).map { try JSONEncoder().encode(Settings(fontSize: $0)) }
            DispatchQueue.concurrentPerform(iterations: 8) { thread in
                for _ in 0..<100 { _ = try? remote.write(values[thread], key: "settings") }
            }
            #expect(await eventually { remote.cache.pendingCount == 0 })
            #expect(await eventually { remote.status == .synced }, "\(remote.status) with \(remote.cache.pendingCount) pending")
        }
    }
}
