import Foundation
import GRDB
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// `undo` and `redo`: the database keeps the history, so they take back and make again exactly what an action
/// changed, whichever process made it, across restarts; a change that something else made since is never lost.
@Suite("Undo and redo", .serialized)
struct UndoTests {
    /// Add, rename, start, stop, delete (a project with its activities): each undone in turn gives the projects as
    /// they were before it, and redoing everything gives the end again, ids and times included.
    @Test(arguments: TestBackend.allCases)
    func undoAndRedoWalkBackAndForthThroughEveryKindOfChange(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let tracker = try await database.tracker(clock: clock)
        var states = [tracker.store.state.projects]
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        states.append(tracker.store.state.projects)
        try await tracker.perform(.renameProject(id: id, name: "Essays"))
        states.append(tracker.store.state.projects)
        #expect(tracker.store.state.undoName == "Rename Writing")
        for _ in 0..<2 {
            try await tracker.perform(.startActivity(projectID: id))
            states.append(tracker.store.state.projects)
            clock.advance(by: 60)
            try await tracker.perform(.stopActivity(projectID: id))
            states.append(tracker.store.state.projects)
        }
        try await tracker.perform(.startActivity(projectID: id))
        states.append(tracker.store.state.projects)
        try await tracker.perform(.deleteProject(id: id))
        states.append(tracker.store.state.projects)
        #expect(tracker.store.state.undoName == "Delete Essays")
        for expected in states.dropLast().reversed() {
            try await tracker.perform(.undo)
            #expect(tracker.store.state.projects == expected)
        }
        #expect(tracker.store.state.undoName == nil && tracker.store.state.redoName == "Add Writing")
        await #expect(throws: TrackerError.nothingToUndo) { try await tracker.perform(.undo) }
        for expected in states.dropFirst() {
            try await tracker.perform(.redo)
            #expect(tracker.store.state.projects == expected)
        }
        await #expect(throws: TrackerError.nothingToRedo) { try await tracker.perform(.redo) }
        // Undoing the delete brings the project back with its three activities, the running one running.
        try await tracker.perform(.undo)
        #expect(try database.count("activity") == 3)
        #expect(tracker.store.state.project(id: id)?.runningSince != nil)
    }

    /// The history is the database's: one tracker undoes what another did, and a tracker opened later redoes it.
    @Test(arguments: TestBackend.allCases)
    func anotherTrackerUndoesAndALaterOneRedoes(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let first = try await database.tracker()
        try await first.perform(.addProject(name: "Writing"))
        do {
            let second = try await database.tracker()
            try await second.perform(.undo)
            #expect(second.store.state.projects.isEmpty && second.store.state.redoName == "Add Writing")
        }
        #expect(await eventually { first.store.state.projects.isEmpty })
        let later = try await database.tracker()
        try await later.perform(.redo)
        #expect(later.store.state.projects.map(\.name) == ["Writing"])
        #expect(await eventually { first.store.state.projects.map(\.name) == ["Writing"] })
    }

    @Test(arguments: TestBackend.allCases)
    func aNewChangeAfterAnUndoForgetsWhatCouldBeRedone(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let tracker = try await database.tracker()
        try await tracker.perform(.addProject(name: "Writing"))
        try await tracker.perform(.undo)
        try await tracker.perform(.addProject(name: "Reading"))
        #expect(tracker.store.state.redoName == nil)
        await #expect(throws: TrackerError.nothingToRedo) { try await tracker.perform(.redo) }
        #expect(tracker.store.state.projects.map(\.name) == ["Reading"])
    }

    /// An undo whose rows something other than timetrack changed since (here, a program removing the activity) is
    /// refused, says so, changes nothing, and stays the next undo.
    @Test func anUndoOfRowsChangedOutsideTimetrackIsRefusedAndChangesNothing() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.startActivity(projectID: id))
        try await database.otherProgram().write { try $0.execute(sql: "UPDATE activity SET startedAt = startedAt - 1") }
        await #expect(throws: TrackerError.changedSince("\"Writing\" or its activities changed since")) {
            try await tracker.perform(.undo)
        }
        #expect(try database.count("activity") == 1)
        #expect(tracker.store.state.undoName == "Start Writing")
        #expect(TrackerError.changedSince("x").description == "Cannot undo or redo that change: x. Nothing was changed.")
    }

    /// A rename is undone only while the project still has the name it gave: a name another program wrote since is
    /// kept, and the undo refused.
    @Test func anUndoOfARenameWhoseNameChangedSinceIsRefused() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        let id = try #require(try await tracker.perform(.addProject(name: "Writing"))).id
        try await tracker.perform(.renameProject(id: id, name: "Essays"))
        try await database.otherProgram().write {
            try $0.execute(sql: "UPDATE project SET name = 'Notes', nameKey = 'notes'")
        }
        await #expect(throws: TrackerError.changedSince("\"Essays\" or its activities changed since")) {
            try await tracker.perform(.undo)
        }
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["Notes"] })
    }

    /// The history keeps the last hundred changes.
    @Test func theHistoryKeepsTheLastHundredChanges() async throws {
        let database = TemporaryDatabase()
        let tracker = try TestClock().tracker(at: database.path)
        for number in 0..<120 { try await tracker.perform(.addProject(name: "P\(number)")) }
        #expect(try database.count("undoStep") == 100)
        for _ in 0..<100 { try await tracker.perform(.undo) }
        await #expect(throws: TrackerError.nothingToUndo) { try await tracker.perform(.undo) }
        #expect(tracker.store.state.projects.count == 20)
    }
}
