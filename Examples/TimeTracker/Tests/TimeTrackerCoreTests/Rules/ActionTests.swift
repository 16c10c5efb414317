import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

@Suite("Actions and rules", .serialized)
struct ActionTests {
    @Test(arguments: TestBackend.allCases)
    func addingTrimsAndRefusesDuplicatesIgnoringCase(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        let added = try #require(try await tracker.perform(.addProject(name: "  Writing  ")))
        #expect(added.name == "Writing")
        await #expect(throws: TrackerError.duplicateName(existing: "Writing")) {
            try await tracker.perform(.addProject(name: "WRITING"))
        }
        await #expect(throws: TrackerError.emptyName) { try await tracker.perform(.addProject(name: " ")) }
        _ = try await tracker.perform(.addProject(name: "été"))
        await #expect(throws: TrackerError.duplicateName(existing: "été")) {
            try await tracker.perform(.addProject(name: "E\u{301}TE\u{301}"))
        }
        #expect(tracker.store.state.projects.map(\.name) == ["été", "Writing"].sorted { $0.lowercased() < $1.lowercased() })
        #expect(try database.count("project") == 2)
    }

    /// A rename follows add's rules among the other projects: a change of case is allowed, a taken or invalid name is
    /// refused and changes nothing, an unknown project is an error; the old name is free again after it.
    @Test(arguments: TestBackend.allCases)
    func renamingFollowsTheNameRulesAmongTheOtherProjects(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        let writing = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.addProject(name: "Reading"))
        #expect(try await tracker.perform(.renameProject(id: writing, name: " WRITING "))?.name == "WRITING")
        await #expect(throws: TrackerError.duplicateName(existing: "Reading")) {
            try await tracker.perform(.renameProject(id: writing, name: "reading"))
        }
        await #expect(throws: TrackerError.emptyName) { try await tracker.perform(.renameProject(id: writing, name: " ")) }
        await #expect(throws: TrackerError.projectNotFound("with id 99")) {
            try await tracker.perform(.renameProject(id: 99, name: "Other"))
        }
        #expect(tracker.store.state.projects.map(\.name) == ["Reading", "WRITING"])
        let renamed = try #require(try await tracker.perform(.renameProject(id: writing, name: "Essays")))
        #expect(renamed.id == writing)
        try await tracker.perform(.addProject(name: "writing"))
        await #expect(throws: TrackerError.duplicateName(existing: "Essays")) {
            try await tracker.perform(.addProject(name: "ESSAYS"))
        }
        #expect(tracker.store.state.projects.map(\.name) == ["Essays", "Reading", "writing"])
    }

    @Test(arguments: TestBackend.allCases)
    func elapsedTimeCountsFinishedActivitiesAndARunningOneShowsItsStart(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        for seconds in [10.0, 20.0] {
            try await tracker.perform(.startActivity(projectID: id))
            clock.advance(by: seconds)
            try await tracker.perform(.stopActivity(projectID: id))
        }
        clock.advance(by: 100)
        let running = try #require(try await tracker.perform(.startActivity(projectID: id)))
        #expect(running.elapsedSeconds == 30)
        #expect(running.runningSince == clock.now)
        #expect(running.elapsed(at: clock.now.addingTimeInterval(5)) == 35)
        #expect(tracker.store.state.project(id: id) == running)
    }

    @Test(arguments: TestBackend.allCases)
    func startingARunningProjectOrStoppingAStoppedOneIsAnErrorThatChangesNothing(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        await #expect(throws: TrackerError.notRunning(project: "Writing")) {
            try await tracker.perform(.stopActivity(projectID: id))
        }
        try await tracker.perform(.startActivity(projectID: id))
        let before = tracker.store.state
        await #expect(throws: TrackerError.alreadyRunning(project: "Writing")) {
            try await tracker.perform(.startActivity(projectID: id))
        }
        #expect(try database.count("activity") == 1)
        #expect(tracker.store.state == before)
    }

    @Test(arguments: TestBackend.allCases)
    func unknownProjectsAreErrors(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        for action in [TrackerAction.deleteProject(id: 7), .startActivity(projectID: 7), .stopActivity(projectID: 7)] {
            await #expect(throws: TrackerError.projectNotFound("with id 7")) { try await tracker.perform(action) }
        }
        #expect(throws: TrackerError.projectNotFound("named \"nope\"")) { try tracker.project(named: " nope ") }
    }

    @Test(arguments: TestBackend.allCases)
    func deletingAProjectDeletesItsActivitiesToo(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        let other = try #require(try await tracker.perform(.addProject(name: "Reading"))).id
        try await tracker.perform(.startActivity(projectID: id))
        try await tracker.perform(.stopActivity(projectID: id))
        try await tracker.perform(.startActivity(projectID: id))
        try await tracker.perform(.startActivity(projectID: other))
        #expect(try await tracker.perform(.deleteProject(id: id)) == nil)
        #expect(try database.count("activity") == 1)
        #expect(tracker.store.state.projects.map(\.id) == [other])
    }

    @Test(arguments: TestBackend.allCases)
    func aClockSetBackNeverMakesANegativeDuration(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.startActivity(projectID: id))
        clock.advance(by: -3600)
        #expect(try await tracker.perform(.stopActivity(projectID: id))?.elapsedSeconds == 0)
    }

    /// An activity started after the clock went back (an NTP step, a laptop resuming) starts where the last one ended,
    /// never inside it: the same time is never counted twice.
    @Test(arguments: TestBackend.allCases)
    func aClockSetBackNeverMakesActivitiesOverlap(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.startActivity(projectID: id))
        clock.advance(by: 3600)
        try await tracker.perform(.stopActivity(projectID: id))
        clock.advance(by: -3600)  // an NTP step, a laptop resuming with a wrong clock
        let restarted = try #require(try await tracker.perform(.startActivity(projectID: id)))
        // It starts where the last one ended, not inside it.
        #expect(restarted.runningSince == clock.now.addingTimeInterval(3600))
        #expect(restarted.elapsed(at: clock.now) == 3600)
        clock.advance(by: 600)
        #expect(try await tracker.perform(.stopActivity(projectID: id))?.elapsedSeconds == 3600)
    }

    @Test(arguments: TestBackend.allCases)
    func theProjectANameMeansIgnoresCase(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        try await tracker.perform(.addProject(name: "Writing"))
        #expect(try tracker.project(named: " writING ").name == "Writing")
    }

    /// A deleted project can be restored once, with its id, name, creation, finished time and running start.
    @Test(arguments: TestBackend.allCases)
    func aDeleteCanBeUndoneExactlyOnce(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.startActivity(projectID: id))
        clock.advance(by: 600)
        try await tracker.perform(.stopActivity(projectID: id))
        clock.advance(by: 60)
        let before = try #require(try await tracker.perform(.startActivity(projectID: id)))
        clock.advance(by: 30)
        try await tracker.perform(.deleteProject(id: id))
        #expect(try database.count("activity") == 0)
        let restored = try #require(try await tracker.perform(.restoreProject(id: id)))
        #expect(restored == before)  // same id, name, creation, finished time and running start
        #expect(try database.count("activity") == 2)
        await #expect(throws: TrackerError.projectNotFound("deleted with id \(id) (a deleted project can be restored for an hour)")) {
            try await tracker.perform(.restoreProject(id: id))
        }
    }

    @Test(arguments: TestBackend.allCases)
    func aRestoreThatWouldDuplicateANameIsRefusedAndTheTrashKeepsOnlyAnHour(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        let first = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.deleteProject(id: first))
        try await tracker.perform(.addProject(name: "WRITING"))
        await #expect(throws: TrackerError.duplicateName(existing: "WRITING")) {
            try await tracker.perform(.restoreProject(id: first))
        }
        let second = try #require(try await tracker.perform(.addProject(name: "Reading"))).id
        clock.advance(by: 3_601)
        try await tracker.perform(.deleteProject(id: second))  // empties the trash of what is older than an hour
        await #expect(throws: TrackerError.self) { try await tracker.perform(.restoreProject(id: first)) }
        #expect(try await tracker.perform(.restoreProject(id: second))?.name == "Reading")
    }

    /// The trash keeps a deleted project for an hour, even when no later delete empties it: a project deleted two days
    /// ago cannot be restored.
    @Test func aProjectDeletedMoreThanAnHourAgoCannotBeRestored() async throws {
        let database = TemporaryDatabase()
        let clock = TestClock()
        let tracker = try clock.tracker(at: database.path)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.deleteProject(id: id))
        clock.advance(by: 2 * 86_400)
        await #expect(throws: TrackerError.self) { try await tracker.perform(.restoreProject(id: id)) }
    }
}
