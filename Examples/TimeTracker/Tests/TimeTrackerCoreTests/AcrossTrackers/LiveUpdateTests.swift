import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// A change made anywhere reaches every tracker's subscribers, on either backend.
@Suite("Live across trackers", .serialized)
struct LiveUpdateTests {
    /// A change made through another tracker (its own connections, as another process has) reaches this tracker's
    /// subscribers once: rendered now, then once per change. That it arrives is checked, with a generous deadline;
    /// how fast is measured by Benchmarks/measure.py.
    @Test(arguments: TestBackend.allCases)
    func aChangeMadeThroughAnotherTrackerReachesThisOnesSubscribers(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let viewer: TimeTracker
        if let file = database as? TemporaryDatabase {
            // A safety net longer than the deadline: only the watch of the database's files can deliver.
            viewer = try clock.tracker(at: file.path, safetyNet: .seconds(3600))
        } else {
            viewer = try await database.tracker(clock: clock)
        }
        let writer = try await database.tracker(clock: clock)  // its own connections, as another process has
        let renders = Renders()
        let subscription = viewer.store.subscribe(\.projects) { renders.append($0.map(\.name)) }
        try await writer.perform(.addProject(name: "Writing"))
        #expect(await eventually { renders.last == ["Writing"] })
        #expect(renders.all == [[], ["Writing"]])  // rendered now, then once per change
        subscription.cancel()
    }
}
