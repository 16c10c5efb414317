import Foundation
import Statehouse
import StatehouseServer
@testable import StatehouseSync
import StatehouseTestSupport
import SyncFixtures
import Synchronization
import Testing

/// The status's listeners and its sequence see the statuses in the order they came: never an older one after a
/// newer, however many threads change the status at once.
@Suite struct SyncStatusOrderTests {
    @Test func statusesChangedFromManyThreadsArePublishedInOrder() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let synced = try SyncedStore(
                name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server.url,
                token: Fixture.writer, outbox: Fixture.temporaryFolder()
            )
            #expect(await eventually { synced.status == .synced })
            let seen = Recorder<Int>()
            let token = synced.engine.status.observe { status in
                if case .pending(let count) = status { seen.append(count) }
            }
            defer { token.cancel() }
            // Each change raises the pending count to a number taken before it: the count only rises.
            let numbers = Atomic<Int>(0)
            DispatchQueue.concurrentPerform(iterations: 8) { _ in
                for _ in 0..<2_000 {
                    let number = numbers.add(1, ordering: .relaxed).newValue
                    synced.engine.update { $0.pending = max($0.pending, number) }
                }
            }
            #expect(await eventually { seen.elements.last == 16_000 })
            let backwards = zip(seen.elements, seen.elements.dropFirst()).filter { $0 > $1 }
            #expect(backwards.isEmpty, "published \(backwards.count) times an older count after a newer: \(backwards.prefix(5))")
        }
    }
}
