import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// Corrections to a project's history: an activity added by hand, edited, deleted; each under the same rules (stops
/// after it starts, not in the future, overlapping none of the project's others), each one undo step.
@Suite("Correcting activities", .serialized)
struct ActivityCorrectionTests {
    private static func at(_ clock: TestClock, _ offset: Double) -> Date {
        clock.now.addingTimeInterval(offset)
    }

    /// A tracker on `database` and a clock moved by hand, with one project, "Writing": its id.
    private static func writing(
        in database: any TestDatabase
    ) async throws -> (tracker: TimeTracker, clock: TestClock, id: Int64) {
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        return (tracker, clock, id)
    }

    @Test(arguments: TestBackend.allCases)
    func anActivityAddedByHandCountsAndUndoTakesItBack(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let (tracker, clock, id) = try await Self.writing(in: database)
        let added = try await tracker.perform(
            .addActivity(projectID: id, startedAt: Self.at(clock, -7_200), stoppedAt: Self.at(clock, -3_600))
        )
        #expect(added?.elapsedSeconds == 3_600)
        #expect(tracker.store.state.undoName == "Add activity to Writing")
        let history = try await tracker.activities(of: id)
        #expect(history.map(\.startedAt) == [Self.at(clock, -7_200)])
        try await tracker.perform(.undo)
        #expect(tracker.store.state.project(id: id)?.elapsedSeconds == 0)
        #expect(try await tracker.activities(of: id).isEmpty)
        try await tracker.perform(.redo)
        #expect(try await tracker.activities(of: id) == history)
    }

    /// Every rule refuses with its own message, and nothing changes.
    @Test(arguments: TestBackend.allCases)
    func badTimesAreRefusedAndChangeNothing(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let (tracker, clock, id) = try await Self.writing(in: database)
        try await tracker.perform(.addActivity(projectID: id, startedAt: Self.at(clock, -600), stoppedAt: Self.at(clock, -300)))
        let existing = try #require(try await tracker.activities(of: id).first).id
        let refusals: [(TrackerAction, TrackerError)] = [
            (.addActivity(projectID: id, startedAt: Self.at(clock, -100), stoppedAt: Self.at(clock, -100)),
             .invalidActivityTimes("An activity stops after it starts.")),
            (.addActivity(projectID: id, startedAt: Self.at(clock, -100), stoppedAt: Self.at(clock, 60)),
             .invalidActivityTimes("An activity cannot start or stop in the future.")),
            (.addActivity(projectID: id, startedAt: Self.at(clock, -900), stoppedAt: Self.at(clock, -400)),
             .overlappingActivity(project: "Writing", other: existing)),
            (.addActivity(projectID: 99, startedAt: Self.at(clock, -100), stoppedAt: Self.at(clock, -50)),
             .projectNotFound("with id 99")),
            (.editActivity(id: 99, startedAt: Self.at(clock, -100), stoppedAt: Self.at(clock, -50)), .activityNotFound(99)),
            (.editActivity(id: existing, startedAt: Self.at(clock, -100), stoppedAt: nil),
             .invalidActivityTimes("A finished activity needs a stop.")),
            (.deleteActivity(id: 99), .activityNotFound(99)),
            // Far off times would not fit the views' whole seconds.
            (.addActivity(projectID: id, startedAt: Date(timeIntervalSince1970: -1e20), stoppedAt: Date(timeIntervalSince1970: 0)),
             .invalidActivityTimes("An activity cannot start before 1970.")),
        ]
        for (action, error) in refusals {
            await #expect(throws: error) { try await tracker.perform(action) }
        }
        #expect(try database.count("activity") == 1)
        #expect(tracker.store.state.undoName == "Add activity to Writing")
    }

    /// An edit moves an activity (activities that only touch are fine), and undo moves it back; the running one keeps
    /// running, and may not start before the last one stopped.
    @Test(arguments: TestBackend.allCases)
    func anEditMovesAnActivityAndUndoMovesItBack(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let (tracker, clock, id) = try await Self.writing(in: database)
        try await tracker.perform(.addActivity(projectID: id, startedAt: Self.at(clock, -3_600), stoppedAt: Self.at(clock, -1_800)))
        try await tracker.perform(.startActivity(projectID: id))
        let activities = try await tracker.activities(of: id)
        let (running, finished) = (activities[0].id, activities[1].id)
        let moved = try await tracker.perform(
            .editActivity(id: finished, startedAt: Self.at(clock, -3_000), stoppedAt: Self.at(clock, -600))
        )
        #expect(moved?.elapsedSeconds == 2_400)
        await #expect(throws: TrackerError.overlappingActivity(project: "Writing", other: finished)) {
            try await tracker.perform(.editActivity(id: running, startedAt: Self.at(clock, -700), stoppedAt: nil))
        }
        await #expect(throws: TrackerError.invalidActivityTimes("This activity is running: stop it first, then change its stop.")) {
            try await tracker.perform(.editActivity(id: running, startedAt: Self.at(clock, -60), stoppedAt: Self.at(clock, -30)))
        }
        let started = try #require(try await tracker.perform(.editActivity(id: running, startedAt: Self.at(clock, -600), stoppedAt: nil)))
        #expect(started.runningSince == Self.at(clock, -600) && started.elapsedSeconds == 2_400)
        #expect(tracker.store.state.undoName == "Edit activity of Writing")
        try await tracker.perform(.undo)
        try await tracker.perform(.undo)
        #expect(try await tracker.activities(of: id) == activities)
    }

    @Test(arguments: TestBackend.allCases)
    func deletingOneActivityKeepsTheOthersAndUndoBringsItBack(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let (tracker, clock, id) = try await Self.writing(in: database)
        for offset in [-3_000.0, -2_000, -1_000] {
            try await tracker.perform(.addActivity(projectID: id, startedAt: Self.at(clock, offset), stoppedAt: Self.at(clock, offset + 500)))
        }
        let before = try await tracker.activities(of: id)
        let left = try await tracker.perform(.deleteActivity(id: before[1].id))
        #expect(left?.elapsedSeconds == 1_000)
        #expect(try await tracker.activities(of: id) == [before[0], before[2]])
        try await tracker.perform(.undo)
        #expect(try await tracker.activities(of: id) == before)
    }

    /// Pages are newest first and never repeat or skip an activity, even when one is added between two pages.
    @Test(arguments: TestBackend.allCases)
    func theHistoryPagesNewestFirstWithoutRepeats(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let (tracker, clock, id) = try await Self.writing(in: database)
        for hour in 1...25 {
            let start = Self.at(clock, -Double(hour) * 3_600)
            try await tracker.perform(.addActivity(projectID: id, startedAt: start, stoppedAt: start.addingTimeInterval(600)))
        }
        var seen: [ActivityRecord] = []
        var page = try await tracker.activities(of: id, limit: 10)
        while !page.isEmpty {
            seen += page
            if seen.count == 10 {
                let newest = Self.at(clock, -1_800)
                try await tracker.perform(.addActivity(projectID: id, startedAt: newest, stoppedAt: newest.addingTimeInterval(60)))
            }
            page = try await tracker.activities(of: id, limit: 10, after: page.last)
        }
        #expect(seen.count == 25 && Set(seen.map(\.id)).count == 25)
        #expect(seen.map(\.startedAt) == seen.map(\.startedAt).sorted(by: >))
        await #expect(throws: TrackerError.projectNotFound("with id 99")) { try await tracker.activities(of: 99) }
    }
}
