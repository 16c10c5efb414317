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
        let add = SyncedTrackerAction(.addProject(name: "Writing"), at: 1_000, origin: "a laptop")
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
            let synced = SyncedTrackerAction(action, at: 1_000 + Double(offset) * 60, origin: "an app")
            _ = SyncedTrackerAction.reducer.reduce(&copy, synced)
            contents = try await applySynced(synced, to: tracker)
        }
        #expect(contents == copy)
        #expect(contents.projects.map(\.name) == ["Essays", "Reading"])
    }

    @Test func anActionTheRulesRefuseWritesNothing() async throws {
        let database = TemporaryDatabase()
        let tracker = try TimeTracker(path: database.path)
        _ = try await applySynced(SyncedTrackerAction(.addProject(name: "Writing"), at: 1, origin: "a"), to: tracker)
        await #expect(throws: TrackerError.duplicateName(existing: "Writing")) {
            _ = try await applySynced(SyncedTrackerAction(.addProject(name: "writing"), at: 2, origin: "b"), to: tracker)
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
            for logged in actions {
                sent.append(logged.action)
                _ = SyncedTrackerAction.reducer.reduce(&contents, SyncedTrackerAction(logged, origin: "test"))
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
