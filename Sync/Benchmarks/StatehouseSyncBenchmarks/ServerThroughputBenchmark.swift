import Foundation
import StatehouseServer
import StatehouseSyncWire
import SyncFixtures

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Pushed actions the server applies per second on SQLite (pushes that arrive while a commit runs are committed
/// together), loaded by 16 clients pushing at once, each waiting for its answer before its next push: Swift clients
/// in this process (`URLSession`), and `wrk` (Debian's `wrk` package) in a process of its own when it is installed.
enum ServerThroughputBenchmark {
    static func run(quick: Bool) async throws -> Report {
        let duration: Duration = quick ? .seconds(1) : .seconds(5)
        var report = Report(title: "Server throughput (SQLite, 16 clients pushing at once, \(duration) each)")
        for batch in [1, 10, 100] {
            let rate = try await actionsPerSecond(batch: batch, duration: duration)
            report.rows.append(("URLSession in this process, actions a push: \(batch)", "\(format(rate, digits: 0)) actions/s", "≥ 5,000 actions/s"))
        }
        if let wrk = WrkLoad.executable {
            let (rate, refused) = try await wrkActionsPerSecond(wrk, duration: duration)
            report.rows.append((
                "wrk, another process, actions a push: 1 (\(refused) answers not 200)", "\(format(rate, digits: 0)) actions/s",
                "≥ 5,000 actions/s"
            ))
        } else {
            report.rows.append(("wrk, another process", "not installed (apt-get install wrk)", ""))
        }
        return report
    }

    /// Single-action pushes from `wrk`: 16 threads of one connection each, each thread a client whose sequence
    /// numbers rise by one a request. The rate counts the actions the store applied (its cursor), not the answers.
    private static func wrkActionsPerSecond(_ wrk: URL, duration: Duration) async throws -> (rate: Double, refused: Int) {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try SyncServerStorage.sqlite(path: folder.appendingPathComponent("server.sqlite").path)
        return try await withRunningServer(try Fixture.server(storage: storage)) { server in
            let load = try WrkLoad(folder: folder, token: Fixture.writer)
            let start = ContinuousClock.now
            let refused = try await load.run(wrk, url: server.url.appendingPathComponent("stores/tracker/actions"), duration: duration)
            let elapsed = ContinuousClock.now - start
            let snapshot = try await URLSession(configuration: .ephemeral).data(for: {
                var request = URLRequest(url: URL(string: "stores/tracker?client=wrk-check", relativeTo: server.url)!)
                request.setValue("Bearer \(Fixture.writer)", forHTTPHeaderField: "Authorization")
                return request
            }())
            let cursor = try JSONDecoder().decode(StoreSnapshot<Tracker>.self, from: snapshot.0).cursor
            return (Double(cursor) / (nanoseconds(elapsed) / 1e9), refused)
        }
    }

    private static func actionsPerSecond(batch: Int, duration: Duration) async throws -> Double {
        let folder = temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let storage = try SyncServerStorage.sqlite(path: folder.appendingPathComponent("server.sqlite").path)
        return try await withRunningServer(try Fixture.server(storage: storage)) { server in
            let session = URLSession(configuration: .ephemeral)
            let deadline = ContinuousClock.now + duration
            let start = ContinuousClock.now
            let applied = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in 0..<16 {
                    group.addTask {
                        var seq: Int64 = 1
                        var applied = 0
                        while ContinuousClock.now < deadline {
                            let actions = (0..<Int64(batch)).map { PushedAction(seq: seq + $0, action: TrackerAction.count(1)) }
                            var request = URLRequest(url: server.url.appendingPathComponent("stores/tracker/actions"))
                            request.httpMethod = "POST"
                            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                            request.setValue("Bearer \(Fixture.writer)", forHTTPHeaderField: "Authorization")
                            request.httpBody = try JSONEncoder().encode(PushRequest(client: "load-\(client)", actions: actions))
                            let (_, response) = try await session.data(for: request)
                            guard (response as? HTTPURLResponse)?.statusCode == 200 else { throw PushFailed() }
                            seq += Int64(batch)
                            applied += batch
                        }
                        return applied
                    }
                }
                return try await group.reduce(0, +)
            }
            let elapsed = ContinuousClock.now - start
            return Double(applied) / (nanoseconds(elapsed) / 1e9)
        }
    }

    struct PushFailed: Error {}
}
