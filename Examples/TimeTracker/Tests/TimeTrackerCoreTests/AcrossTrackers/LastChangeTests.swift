import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// Every tracker's state says what the newest change was and who made it, whichever tracker (process, server) did.
@Suite("Who changed what last", .serialized)
struct LastChangeTests {
    @Test(arguments: TestBackend.allCases)
    func everyTrackerSeesTheNewestChangeAndWhoMadeIt(on backend: TestBackend) async throws {
        let database = try testDatabase(on: backend)
        let clock = TestClock()
        let server = try await database.tracker(clock: clock, origin: "timetrack serve")
        let command = try await database.tracker(clock: clock, origin: "timetrack add (pid 7 on laptop)")
        #expect(server.store.state.lastChange == nil)
        let id = try #require(try await command.perform(.addProject(name: "Reading"))).id
        let added = LastChange(summary: "Add Reading", origin: "timetrack add (pid 7 on laptop)", at: clock.now)
        #expect(await eventually { server.store.state.lastChange == added })
        clock.advance(by: 60)
        try await server.perform(.undo)
        let undone = LastChange(summary: "Undo Add Reading", origin: "timetrack serve", at: clock.now)
        #expect(await eventually { command.store.state.lastChange == undone })
        // A change that changed nothing leaves the newest change as it was.
        try await command.perform(.redo)
        try await command.perform(.renameProject(id: id, name: "Reading"))
        #expect(command.store.state.lastChange?.summary == "Redo Add Reading")
    }
}
