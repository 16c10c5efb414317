import Foundation
import Statehouse
import StatehouseServer
import StatehouseSync
import SyncFixtures

/// 1,000 actions queued offline, then the server comes back: the time from `syncNow()` until the store is synced
/// (every action pushed, applied, and seen in the server's state).
enum QueuedActionsBenchmark {
    static func run() async throws -> Report {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try SyncServerStorage.sqlite(path: folder.appendingPathComponent("server.sqlite").path)
        let port = try await withRunningServer(try Fixture.server(storage: storage)) { $0.port }
        let synced = try SyncedStore(
            name: "tracker", initialState: Tracker(), reducer: trackerReducer,
            server: URL(string: "http://127.0.0.1:\(port)/")!, token: Fixture.writer,
            outbox: folder.appendingPathComponent("outbox")
        )
        for index in 0..<1_000 { synced.store.dispatch(.add("entry \(index)")) }
        try await waitUntil("the store to go offline: \(synced.status)") {
            if case .offline = synced.status { true } else { false }
        }
        return try await withRunningServer(try Fixture.server(storage: storage), port: port) { _ in
            let start = ContinuousClock.now
            synced.syncNow()
            try await waitUntil("the queued actions to sync: \(synced.status)") { synced.status == .synced }
            let elapsed = ContinuousClock.now - start
            var report = Report(title: "1,000 actions queued offline, pushed and confirmed (server on SQLite)")
            report.rows.append(("from `syncNow()` to `.synced`", "\(format(milliseconds(elapsed))) ms", "≤ 1,000 ms"))
            return report
        }
    }
}
