import Foundation
import Hummingbird
import Statehouse
import StatehouseServer
@testable import StatehouseSync
import StatehouseSyncWire
import StatehouseTestSupport
import SyncFixtures
import Testing

/// An action leaves for the server only once the outbox on disk holds it: pushed first and then lost in a crash,
/// its sequence number would go to the next action, which the server would skip as a replay.
@Suite struct OutboxBeforePushTests {
    private func synced(_ server: URL, outbox: URL) throws -> SyncedStore<Tracker, TrackerAction> {
        try SyncedStore(
            name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server, token: Fixture.writer,
            outbox: outbox
        )
    }

    /// The outbox as the disk holds it now.
    private static func journalOnDisk(_ outbox: URL) -> SyncJournal<Tracker, TrackerAction>? {
        guard let data = try? FileStorage(directory: outbox).load(key: "sync.tracker") else { return nil }
        return try? JSONDecoder().decode(SyncJournal<Tracker, TrackerAction>.self, from: data)
    }

    /// Each push, when it reaches the server, holds only actions the outbox on disk numbered already: a burst of
    /// dispatches, each pushed as soon as the loop gets to it, within the outbox's coalescing window.
    @Test func everyPushedActionIsOnDiskWhenItArrives() async throws {
        let outbox = Fixture.temporaryFolder()
        let unsaved = Recorder<Int64>()
        let handled = Cell<Int64>(0)
        let script = try await ScriptedServer.start(
            push: { _, request, _ in
                let nextOnDisk = Self.journalOnDisk(outbox)?.nextSeq ?? 1
                for pushed in request.actions where pushed.seq >= nextOnDisk { unsaved.append(pushed.seq) }
                let through = handled.withLock { handled in
                    handled = max(handled, request.actions.last?.seq ?? 0)
                    return handled
                }
                return ScriptedServer.json(PushAnswer(handledThrough: through, refused: [], cursor: 0))
            },
            pull: { ScriptedServer.json(StoreSnapshot(cursor: 0, state: Tracker(), handledThrough: 0)) }
        )
        let synced = try synced(script.url, outbox: outbox)
        for round in 0..<20 {
            for index in 0..<10 { synced.store.dispatch(.add("\(round).\(index)")) }
            await Task.yield()
        }
        #expect(await eventually(timeout: .seconds(60)) { handled.value == 200 })
        #expect(unsaved.elements.isEmpty, "pushed before the outbox held them: \(unsaved.elements)")
        await script.stop()
    }

    /// An outbox restored from a copy older than its last pushes numbers its next action as one the server handled:
    /// the server answers 409 rather than skip it, and the status shows the failure instead of "synced".
    @Test func anOutboxRestoredFromAnOlderCopyLosesNoAction() async throws {
        try await withRunningServer(try Fixture.server()) { server async throws in
            let outbox = Fixture.temporaryFolder()
            let olderCopy = Fixture.temporaryFolder().appendingPathComponent("outbox")
            do {
                let first = try synced(server.url, outbox: outbox)
                first.store.dispatch(.add("first"))
                #expect(await eventually { first.status == .synced })
                try first.flush()
                try FileManager.default.copyItem(at: outbox, to: olderCopy)
                first.store.dispatch(.add("second"))
                #expect(await eventually { first.status == .synced })
            }
            var reopened: SyncedStore<Tracker, TrackerAction>?
            #expect(await eventually { reopened = try? synced(server.url, outbox: olderCopy); return reopened != nil })
            let restored = try #require(reopened)
            restored.store.dispatch(.add("after the restore"))
            let refused = await eventually {
                if case .failed(.refusedByServer(status: 409, let message)) = restored.status {
                    message.contains("restored")
                } else {
                    false
                }
            }
            #expect(refused, "status: \(restored.status)")
            #expect(try await server.snapshot(client: "observer").state.entries == ["first", "second"])
        }
    }
}
