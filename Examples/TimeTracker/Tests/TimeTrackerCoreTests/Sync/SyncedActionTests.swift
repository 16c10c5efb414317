import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// The tracker's database as a sync server's copy: an action an app pushed is applied once, by the same rules the
/// app ran on its own copy; and a client's copy takes the server's contents whole.
@Suite struct SyncedActionTests {
    /// Blocks as a sync server's reducer does: off the cooperative pool.
    private func applySynced(_ synced: SyncedTrackerAction, to tracker: TimeTracker) async throws -> TrackerContents {
        try await Task.detached { try tracker.applySynced(synced) }.value
    }

    @Test func anActionPushedTwiceIsAppliedOnce() async throws {
        let database = TemporaryDatabase()
        let tracker = try TimeTracker(path: database.path)
        let add = SyncedTrackerAction(LoggedAction(.addProject(name: "Writing"), at: 1_000), madeOn: TrackerContents(), origin: "a laptop")
        let first = try await applySynced(add, to: tracker)
        let second = try await applySynced(add, to: tracker)
        #expect(first.projects.map(\.name) == ["Writing"])
        #expect(second == first)
        #expect(try database.count("actionLog") == 1)
        #expect(await eventually { tracker.store.state.lastChange?.origin == "a laptop" })
    }

    /// The server's database and the app's copy, each running the rules its own way, agree: ids, times, undo.
    @Test func theServersDatabaseAndTheAppsCopyAgree() async throws {
        let tracker = try TimeTracker(path: TemporaryDatabase().path)
        var copy = TrackerContents()
        var contents = TrackerContents()
        let actions: [TrackerAction] = [
            .addProject(name: "Writing"), .addProject(name: "Reading"), .startActivity(projectID: 1),
            .stopActivity(projectID: 1), .deleteProject(id: 2), .undo, .renameProject(id: 1, name: "Essays"),
        ]
        for (offset, action) in actions.enumerated() {
            let synced = SyncedTrackerAction(LoggedAction(action, at: 1_000 + Double(offset) * 60), madeOn: copy, origin: "an app")
            _ = SyncedTrackerAction.reducer.reduce(&copy, synced)
            contents = try await applySynced(synced, to: tracker)
        }
        #expect(contents == copy)
        #expect(contents.projects.map(\.name) == ["Essays", "Reading"])
    }

    /// Ids differ between copies: a copy offline gives a project it adds the next id, which the server may give to
    /// another meanwhile. An action reaches the rows the user meant, found by their names and starts, on the server
    /// as in the copy; an undo whose step is no longer the newest is refused rather than undoing another change.
    @Test func anActionReachesTheRowsTheUserMeantWhateverTheirIds() async throws {
        let tracker = try TimeTracker(path: TemporaryDatabase().path)
        func made(_ action: TrackerAction, at time: Double, on contents: inout TrackerContents) -> SyncedTrackerAction {
            let synced = SyncedTrackerAction(LoggedAction(action, at: time), madeOn: contents, origin: "a copy")
            _ = SyncedTrackerAction.reducer.reduce(&contents, synced)
            return synced
        }
        try await tracker.perform(.addProject(name: "Alpha"))
        var copy = try await Task.detached { try tracker.contents() }.value
        // Offline: the copy adds Beta (its id 2 there), logs an hour on it, and deletes that activity; it undoes it.
        let offline = [
            made(.addProject(name: "Beta"), at: 100, on: &copy),
            made(
                .addActivity(projectID: 2, startedAt: Date(timeIntervalSince1970: 200), stoppedAt: Date(timeIntervalSince1970: 3_800)),
                at: 4_000, on: &copy
            ),
            made(.startActivity(projectID: 2), at: 5_000, on: &copy),
        ]
        let deleteTheHour = made(.deleteActivity(id: copy.activities.first { $0.startedAt == 200 }?.id ?? 0), at: 6_000, on: &copy)
        // Meanwhile the server gives id 2 to Gamma, and logs an activity of its own, id 1.
        try await tracker.perform(.addProject(name: "Gamma"))
        try await tracker.perform(
            .addActivity(projectID: 1, startedAt: Date(timeIntervalSince1970: 50), stoppedAt: Date(timeIntervalSince1970: 90))
        )
        for synced in offline + [deleteTheHour] { _ = try await applySynced(synced, to: tracker) }
        let contents = try await Task.detached { try tracker.contents() }.value
        let beta = try #require(contents.projects.first { $0.name == "Beta" })
        #expect(beta.id == 3)
        #expect(contents.activities.map(\.projectID).sorted() == [1, 3], "Alpha's activity kept; Beta's hour deleted, Beta running")
        #expect(contents.activities.contains { $0.projectID == beta.id && $0.stoppedAt == nil })
        // The copy's undo was of "Start Beta"; the server's newest change is now another.
        try await tracker.perform(.stopActivity(projectID: beta.id))
        let undo = made(.undo, at: 7_000, on: &copy)
        let before = try await Task.detached { try tracker.contents() }.value
        await #expect(throws: TrackerError.self) { _ = try await applySynced(undo, to: tracker) }
        #expect(try await Task.detached { try tracker.contents() }.value == before)
    }

    /// A project is named by its key and its creation: offline, a copy renames Work to Job and starts Job; another
    /// copy adds a project Job first. The rename is refused, and so is the start, rather than start the other Job.
    @Test func anActionNeverReachesAnotherProjectOfTheSameName() async throws {
        let tracker = try TimeTracker(path: TemporaryDatabase().path)
        try await tracker.perform(.addProject(name: "Work"))
        var copy = try await Task.detached { try tracker.contents() }.value
        func made(_ action: TrackerAction, at time: Double) -> SyncedTrackerAction {
            let synced = SyncedTrackerAction(LoggedAction(action, at: time), madeOn: copy, origin: "a copy")
            _ = SyncedTrackerAction.reducer.reduce(&copy, synced)
            return synced
        }
        let rename = made(.renameProject(id: 1, name: "Job"), at: 100)
        let start = made(.startActivity(projectID: 1), at: 200)
        try await tracker.perform(.addProject(name: "Job"))
        await #expect(throws: TrackerError.self) { _ = try await applySynced(rename, to: tracker) }
        await #expect(throws: TrackerError.self) { _ = try await applySynced(start, to: tracker) }
        #expect(try await Task.detached { try tracker.contents() }.value.activities.isEmpty)
    }

    @Test func anActionTheRulesRefuseWritesNothing() async throws {
        let database = TemporaryDatabase()
        let tracker = try TimeTracker(path: database.path)
        _ = try await applySynced(SyncedTrackerAction(LoggedAction(.addProject(name: "Writing"), at: 1), madeOn: TrackerContents(), origin: "a"), to: tracker)
        await #expect(throws: TrackerError.duplicateName(existing: "Writing")) {
            _ = try await applySynced(SyncedTrackerAction(LoggedAction(.addProject(name: "writing"), at: 2), madeOn: TrackerContents(), origin: "b"), to: tracker)
        }
        #expect(try database.count("project") == 1)
        #expect(try database.count("actionLog") == 1 && database.count("syncReceipt") == 1)
    }

    /// A client's copy takes the server's contents whole, undo history and ids included, and logs no action.
    @Test func aCopyTakesTheServersContentsWhole() async throws {
        let server = try TimeTracker(path: TemporaryDatabase().path)
        for action: TrackerAction in [.addProject(name: "Writing"), .addProject(name: "Reading"), .deleteProject(id: 2)] {
            try await server.perform(action)
        }
        let copyDatabase = TemporaryDatabase()
        let copy = try TimeTracker(path: copyDatabase.path)
        try await copy.perform(.addProject(name: "Only here"))
        let contents = try await Task.detached { try server.contents() }.value
        let cursor = try await copy.exchange(after: nil) { sent in
            #expect(sent.isEmpty)
            return contents
        }
        #expect(try await Task.detached { try copy.contents() }.value == contents)
        #expect(copy.store.state.projects.map(\.name) == ["Writing"])
        #expect(copy.store.state.undoName == "Delete Reading")
        #expect(try cursor == 1 && copyDatabase.count("actionLog") == 1, "taking the contents logged nothing")
    }

    /// What was applied to the copy since the last exchange is handed over in the next one, in order; an exchange
    /// that finds the copy as it should be writes nothing.
    @Test func anExchangeHandsOverWhatWasAppliedSinceTheLast() async throws {
        let copy = try TimeTracker(path: TemporaryDatabase().path)
        var cursor = try await copy.exchange(after: nil) { _ in TrackerContents() }
        try await copy.perform(.addProject(name: "Writing"))
        try await copy.perform(.startActivity(projectID: 1))
        let sent = Recorder<TrackerAction>()
        cursor = try await copy.exchange(after: cursor) { actions in
            var contents = TrackerContents()
            for entry in actions {
                sent.append(entry.action.action)
                _ = SyncedTrackerAction.reducer.reduce(&contents, SyncedTrackerAction(entry.action, madeOn: contents, origin: "test"))
            }
            return contents
        }
        let expected = try await Task.detached { try copy.contents() }.value
        #expect(sent.elements == [.addProject(name: "Writing"), .startActivity(projectID: 1)])
        let written = try await copy.exchange(after: cursor) { actions in
            #expect(actions.isEmpty)
            return expected
        }
        #expect(written == cursor)
        #expect(expected.projects.map(\.name) == ["Writing"] && expected.activities.count == 1)
    }
}
