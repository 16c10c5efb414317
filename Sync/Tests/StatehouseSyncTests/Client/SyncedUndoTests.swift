import Foundation
import Statehouse
import StatehouseServer
import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// On a synced store of `Undoable` state, undo and redo are actions: the server applies them with the same reducer,
/// and every client ends with the same state, the other clients' changes kept.
@Suite struct SyncedUndoTests {
    private func notes(_ server: URL) throws -> SyncedStore<Undoable<Tracker, TrackerAction>, UndoableAction<TrackerAction>> {
        try SyncedStore(
            name: "notes", initialState: Undoable(Tracker()), reducer: notesReducer.reduce, server: server,
            token: Fixture.writer, outbox: Fixture.temporaryFolder()
        )
    }

    @Test func anUndoOnOneClientReachesTheServerAndTheOtherClient() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let a = try notes(server.url)
            let b = try notes(server.url)
            a.store.dispatch(.action(.add("draft")))
            #expect(await eventually { b.store.state.present.entries == ["draft"] })
            b.store.dispatch(.action(.count(5)))
            #expect(await eventually { a.store.state.present.total == 5 })
            // Undo on A takes back its entry, which B's count came after: the count stays.
            #expect(a.store.canUndo)
            a.store.undo()
            #expect(a.store.state.present == Tracker(entries: [], total: 5))
            #expect(await eventually {
                a.status == .synced && b.store.state == a.store.state && b.store.canRedo
            })
            let snapshot = try await server.request("GET", "stores/notes?client=x")
                .decoded(StoreSnapshot<Undoable<Tracker, TrackerAction>>.self)
            #expect(snapshot.state == a.store.state)
            // Redo from the other client.
            b.store.redo()
            #expect(await eventually { a.store.state.present == Tracker(entries: ["draft"], total: 5) })
        }
    }
}
