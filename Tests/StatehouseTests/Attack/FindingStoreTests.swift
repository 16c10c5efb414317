// Findings of the adversarial review of issue 10's fix, kept as regression tests.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

private struct RCount: Codable, Equatable, Sendable { var n = 0; var pongs = 0; var holds = 0 }
private enum RCAction: Sendable { case slow, ping, hold }

@Suite(.serialized) struct FindingStoreTests {
    /// A persisted store busy for a few poll intervals: two outside states are queued with the same count; the first
    /// is taken, the newer one dropped, and never read again.
    @Test func aBusyStoreDropsTheNewerOutsideState() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("review-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "review.store.\(UUID().uuidString)"
        let other = FileStorage(directory: dir)
        let store = Store(
            initialState: RCount(), key: key, storage: .file(directory: dir),
            externalChanges: .poll(every: .milliseconds(20))
        ) { (state: inout RCount, action: RCAction) in
            if case .hold = action { state.holds += 1 }
        }
        // A slow subscriber keeps the processor busy, outside the state lock, after a local change.
        let token = store.subscribe(\.holds, initial: false) { _ in Thread.sleep(forTimeInterval: 0.6) }
        let busy = Thread { store.dispatch(.hold) }
        busy.start()
        #expect(await eventually { store.state.holds == 1 })
        try store.flush()   // the local change is written: outside states are newer from here on
        try other.save(try JSONEncoder().encode(RCount(n: 1, holds: 1)), key: key)
        try await Task.sleep(for: .milliseconds(100))  // a window: lets a poll read 1 while the processor is busy
        try other.save(try JSONEncoder().encode(RCount(n: 2, holds: 1)), key: key)
        #expect(await eventually { store.state.n == 2 }, "the newer outside state was dropped for good")
        token.cancel()
    }
}
