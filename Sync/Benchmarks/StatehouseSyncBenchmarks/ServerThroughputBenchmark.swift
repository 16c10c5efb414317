import Foundation
import StatehouseServer
import StatehouseSyncWire
import SyncFixtures

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Pushed actions the server applies per second on SQLite (one transaction a push), loaded by Swift clients in this
/// process: 16 clients pushing at once, each waiting for its answer before its next push.
enum ServerThroughputBenchmark {
    static func run(quick: Bool) async throws -> Report {
        let duration: Duration = quick ? .seconds(1) : .seconds(5)
        var report = Report(title: "Server throughput (SQLite, 16 clients pushing at once, \(duration) each)")
        for batch in [1, 10, 100] {
            let rate = try await actionsPerSecond(batch: batch, duration: duration)
            report.rows.append(("actions a push: \(batch)", "\(format(rate, digits: 0)) actions/s", "≥ 5,000 actions/s"))
        }
        return report
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
