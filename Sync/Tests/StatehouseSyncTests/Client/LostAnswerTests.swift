import Foundation
import Hummingbird
import Statehouse
import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// A push's answer lost after the server handled the batch (a proxy answering 502 after the upstream committed, a
/// connection dropped) loses nothing: a refusal in that batch is still reported, and the store does not stay
/// offline.
@Suite struct LostAnswerTests {
    /// The batch [add("kept"), forbidden]: the server applies 1, refuses 2, and its feed shows 1 handled through 2
    /// before the answer, which is lost. The app takes both out of its outbox on the feed's word; only the answer
    /// says that 2 was refused, so it pushes them again until an answer comes.
    @Test func aRefusalWhoseAnswerWasLostIsStillReported() async throws {
        let store = Cell<SyncedStore<Tracker, TrackerAction>?>(nil)
        let answered = Cell(false)
        let script = try await ScriptedServer.start(
            push: { _, request, server in
                guard request.actions.contains(where: { $0.seq == 2 }) else {
                    return ScriptedServer.json(ErrorAnswer(error: "busy"), status: .serviceUnavailable)
                }
                let first = answered.withLock { answered -> Bool in
                    defer { answered = true }
                    return !answered
                }
                if first {
                    server.send(
                        FeedEvent.change, id: 1, StoreChange(cursor: 1, state: Tracker(entries: ["kept"]), handledThrough: 2)
                    )
                    _ = await eventually(timeout: .seconds(60)) { store.value?.pendingCount == 0 }
                    return ScriptedServer.json(ErrorAnswer(error: "upstream timed out"), status: .badGateway)
                }
                return ScriptedServer.json(
                    PushAnswer(handledThrough: 2, refused: [Refusal(seq: 2, reason: "forbidden here")], cursor: 1)
                )
            },
            pull: { ScriptedServer.json(StoreSnapshot(cursor: 1, state: Tracker(entries: ["kept"]), handledThrough: 2)) }
        )
        script.send(FeedEvent.snapshot, id: 0, StoreSnapshot(cursor: 0, state: Tracker(), handledThrough: 0))
        let synced = try SyncedStore(
            name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: script.url,
            token: Fixture.writer, outbox: Fixture.temporaryFolder()
        )
        store.value = synced
        synced.store.dispatch(.add("kept"))
        synced.store.dispatch(.forbidden)
        let reported = await eventually(timeout: .seconds(60)) {
            if case .refused(let refusals) = synced.status { refusals.map(\.seq) == [2] } else { false }
        }
        #expect(reported, "status: \(synced.status); pushes: \(script.pushes)")
        #expect(synced.store.state.entries == ["kept"] && synced.pendingCount == 0)
        store.value = nil
        await script.stop()
    }
}
