import Foundation
import Statehouse
import StatehouseServer
import StatehouseSync
import Synchronization
import SyncFixtures

/// Client A's dispatch to client B's subscriber, through a server on loopback that 10 clients follow: A dispatches,
/// B's subscriber hears the new total, and only then A dispatches again.
enum LatencyBenchmark {
    static func run(quick: Bool) async throws -> Report {
        let samples = quick ? 50 : 500
        let syncServer = try Fixture.server()
        return try await withRunningServer(syncServer) { server in
            let latencies = try await measure(samples: samples, pushTo: server.url, followOn: server.url) {
                syncServer.followerCounts["tracker"] == 11
            }
            return report(latencies, title: "A's dispatch → B's subscriber (loopback, 10 clients following, \(samples) samples)")
        }
    }

    /// `samples` latencies, in milliseconds, from A's dispatch to `pushTo` to B's subscriber following `followOn`
    /// with 9 other clients; `feedsOpen` says when the servers count all of them following.
    static func measure(
        samples: Int, pushTo: URL, followOn: URL, feedsOpen: @escaping () -> Bool
    ) async throws -> [Double] {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        // The synced stores end with `sample`, before their folder goes.
        return try await sample(samples, pushTo: pushTo, followOn: followOn, folder: folder, feedsOpen: feedsOpen)
    }

    private static func sample(
        _ samples: Int, pushTo: URL, followOn: URL, folder: URL, feedsOpen: @escaping () -> Bool
    ) async throws -> [Double] {
        func synced(_ name: String, _ server: URL) throws -> SyncedStore<Tracker, TrackerAction> {
            try SyncedStore(
                name: "tracker", initialState: Tracker(), reducer: trackerReducer, server: server,
                token: Fixture.writer, outbox: folder.appendingPathComponent(name)
            )
        }
        let a = try synced("a", pushTo)
        let followers = try (0..<10).map { try synced("b\($0)", followOn) }
        let heard = Mutex<(total: Int, at: ContinuousClock.Instant)>((0, .now))
        let token = followers[0].store.subscribe(\.total) { total in heard.withLock { $0 = (total, .now) } }
        defer { token.cancel() }
        // A store shows `synced` before its feed is open: wait for the servers to count every feed.
        try await waitUntil("every client's feed to open", feedsOpen)
        var latencies: [Double] = []
        for round in 1...(samples + 20) {
            let start = ContinuousClock.now
            a.store.dispatch(.count(1))
            try await waitUntil("B to hear total \(round): it has \(heard.withLock { $0.total }); A: \(a.status); B0: \(followers[0].store.state.total) \(followers[0].status)") {
                heard.withLock { $0.total } >= round
            }
            let arrived = heard.withLock { $0.at }
            if round > 20 { latencies.append(milliseconds(arrived - start)) }
        }
        return latencies
    }

    static func report(_ latencies: [Double], title: String) -> Report {
        var report = Report(title: title)
        report.rows.append(("p50", "\(format(percentile(latencies, 0.5), digits: 2)) ms", "≤ 20 ms"))
        report.rows.append(("p99", "\(format(percentile(latencies, 0.99), digits: 2)) ms", "≤ 50 ms"))
        return report
    }
}
