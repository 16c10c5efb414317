import Foundation
import Statehouse
import StatehouseServer
import StatehouseSync
import SyncFixtures
import Testing

/// A synced store let go while it pushes and follows stops without hanging the thread that lets it go: stopping
/// cancels its loops while their requests finish.
@Suite struct ReleasingMidPushTests {
    @Test func releasingSyncedStoresWhileTheyPushNeverHangs() async {
        await #expect(processExitsWith: .success) {
            Thread.detachNewThread {
                sleep(90)
                FileHandle.standardError.write(Data("WATCHDOG: hung\n".utf8))
                exit(3)
            }
            let running = try await RunningServer.start(try Fixture.server())
            for round in 0..<200 {
                let outbox = Fixture.temporaryFolder()
                do {
                    let synced = try SyncedStore(
                        name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: running.url,
                        token: Fixture.writer, outbox: outbox
                    )
                    for index in 0..<20 { synced.store.dispatch(.add("\(round).\(index)")) }
                    // Let go at a random instant of its first exchanges, not a wait for a signal.
                    try await Task.sleep(for: .microseconds(Int.random(in: 0...3_000)))
                }
                try? FileManager.default.removeItem(at: outbox)
            }
            await running.stop()
        }
    }
}
