import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// `perform` returns once the tracker's state shows the action's own write, even while other threads dispatch to
/// the store (then the snapshot sent after the write is only queued, and applied by the thread dispatching).
@Suite("perform shows its own write")
struct PerformShowsItsWriteTests {
    @Test func theStateShowsTheWriteWhenPerformReturnsWhileOthersDispatch() async throws {
        let database = TemporaryDatabase()
        let tracker = try await database.tracker()
        for index in 0..<50 {
            // Other dispatches at the same moment: the snapshot sent after the write may then only be queued.
            let others = Task.detached { for _ in 0..<5 { tracker.store.dispatch(.refresh) } }
            try await tracker.perform(.addProject(name: "project \(index)"))
            let names = tracker.store.state.projects.map(\.name)
            #expect(names.contains("project \(index)"), "after project \(index): \(names.count) projects")
            await others.value
        }
    }
}
