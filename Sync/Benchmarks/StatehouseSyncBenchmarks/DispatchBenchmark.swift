import Foundation
import Statehouse
import StatehouseServer
import StatehouseSync
import SyncFixtures

/// `SyncedStore.dispatch` against a persisted `Store.dispatch` on the same file storage: the network is never on the
/// caller's path, only the outbox's bookkeeping is. Each takes bursts of 1,000 dispatches, as an app does; between
/// bursts (not timed) the persisted store flushes and the synced store syncs, so that each burst starts from an
/// empty outbox. A third store is offline: its outbox only grows (to 60,000 actions), which must not make its
/// dispatches slower.
enum DispatchBenchmark {
    static func run(quick: Bool) async throws -> Report {
        let bursts = quick ? 10 : 60
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        return try await withRunningServer(try Fixture.server()) { server in
            let persisted = Store(
                initialState: Tracker(), key: "bench.persisted",
                storage: FileStorage(directory: folder.appendingPathComponent("persisted")), reducer: trackerReducer
            )
            func synced(_ server: URL, outbox: String) throws -> SyncedStore<Tracker, TrackerAction> {
                try SyncedStore(
                    name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server,
                    token: Fixture.writer, outbox: folder.appendingPathComponent(outbox)
                )
            }
            let online = try synced(server.url, outbox: "online")
            // Port 1: nothing listens there, so every try fails at once and the store stays offline.
            let offline = try synced(URL(string: "http://127.0.0.1:1/")!, outbox: "offline")
            var times: (persisted: [Double], online: [Double], offline: [Double]) = ([], [], [])
            // Alternated, so that all three see the same machine.
            for _ in 0..<bursts {
                times.persisted.append(burst { persisted.dispatch(.count(1)) })
                try persisted.flush()
                times.online.append(burst { online.store.dispatch(.count(1)) })
                try await waitUntil("the online store to sync: \(online.status)") { online.status == .synced }
                times.offline.append(burst { offline.store.dispatch(.count(1)) })
            }
            let baseline = percentile(times.persisted, 0.5)
            let onlineCost = percentile(times.online, 0.5)
            let offlineCost = percentile(times.offline, 0.5)
            let lastOffline = times.offline.suffix(max(1, bursts / 10))
            var report = Report(title: "Dispatch: the caller's cost (median of \(bursts) bursts of 1,000)")
            report.rows.append(("persisted `Store.dispatch` (FileStorage, coalesced writes)", "\(format(baseline)) ns", "baseline"))
            report.rows.append(("`SyncedStore.store.dispatch`, server on loopback", "\(format(onlineCost)) ns", ""))
            report.rows.append(("ratio", "\(format(onlineCost / baseline, digits: 2))×", "≤ 2×"))
            report.rows.append(("`SyncedStore.store.dispatch`, offline, outbox growing to \(bursts),000", "\(format(offlineCost)) ns", ""))
            report.rows.append((
                "offline, the last tenth of the bursts against the median",
                "\(format(percentile(Array(lastOffline), 0.5) / offlineCost, digits: 2))×", "no growth"
            ))
            return report
        }
    }

    /// Nanoseconds per call of 1,000 calls of `dispatch` in a row.
    private static func burst(_ dispatch: () -> Void) -> Double {
        let start = ContinuousClock.now
        for _ in 0..<1_000 { dispatch() }
        return nanoseconds(ContinuousClock.now - start) / 1_000
    }
}
