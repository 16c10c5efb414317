import Foundation
import PostgresTestCluster
import StatehouseServer
import StatehouseSyncWire
import SyncFixtures

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Two server instances in this process on one action log of a private PostgreSQL cluster (its settings: no
/// `fsync`, asynchronous commits): A's dispatch through instance 1 to B's subscriber on instance 2, and single-action
/// pushes from `wrk` to instance 1, counted as instance 2 applies them.
enum ReplicatedBenchmark {
    static func run(quick: Bool) async throws -> Report {
        guard PostgresTestCluster.isInstalled else {
            return Report(title: "Two instances on PostgreSQL: not run, PostgreSQL is not installed (apt-get install postgresql)")
        }
        let samples = quick ? 50 : 500
        let duration: Duration = quick ? .seconds(1) : .seconds(5)
        return try await withInstances(2) { cluster, instances in
            let (first, second) = (instances[0], instances[1])
            var report = LatencyBenchmark.report(
                try await LatencyBenchmark.measure(samples: samples, pushTo: first.running.url, followOn: second.running.url) {
                    first.server.followerCounts["tracker"] == 1 && second.server.followerCounts["tracker"] == 10
                },
                title: "Two instances on one PostgreSQL log: A's dispatch to instance 1 → B's subscriber on instance 2 (10 clients following it, \(samples) samples)"
            )
            if let wrk = WrkLoad.executable {
                let folder = temporaryFolder()
                defer { try? FileManager.default.removeItem(at: folder) }
                let before = try await cursor(of: second.running)
                let start = ContinuousClock.now
                let refused = try await WrkLoad(folder: folder, token: Fixture.writer)
                    .run(wrk, url: first.running.url.appendingPathComponent("stores/tracker/actions"), duration: duration)
                let elapsed = ContinuousClock.now - start
                let rate = Double(try await cursor(of: second.running) - before) / (nanoseconds(elapsed) / 1e9)
                report.rows.append((
                    "wrk to instance 1, 1 action a push, applied on instance 2 (\(refused) answers not 200)",
                    "\(format(rate, digits: 0)) actions/s", ""
                ))
            }
            return report
        }
    }

    /// The store's cursor on `instance`, once it applied every push its log held when asked.
    private static func cursor(of instance: RunningServer) async throws -> Int64 {
        var request = URLRequest(url: URL(string: "stores/tracker?client=benchmark", relativeTo: instance.url)!)
        request.setValue("Bearer \(Fixture.writer)", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession(configuration: .ephemeral).data(for: request)
        return try JSONDecoder().decode(StoreSnapshot<Tracker>.self, from: data).cursor
    }
}
