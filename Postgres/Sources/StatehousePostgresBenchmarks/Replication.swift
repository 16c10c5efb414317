import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres

// A ReplicatedStore's latencies: dispatch → applied in this process (`send` returning), and dispatch → applied in
// another process (this executable again, with `--follow LOG`, printing when it applied each action), one action
// at a time, beside a bare INSERT's round trip in the same run.

struct Clicks: Codable, Equatable, Sendable {
    var count = 0
}

enum Click: Codable, Sendable {
    case click
}

/// Nanoseconds on the machine's monotonic clock, which every process of the machine shares.
func monotonicNanoseconds() -> Int64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
}

func makeClicks(_ client: PostgresClient, log: String) throws -> ReplicatedStore<Clicks, Click> {
    try ReplicatedStore(client: client, log: log, initialState: Clicks()) { state, _ in state.count += 1 }
}

/// The other process: follows `log`; once caught up, prints "<count> <nanoseconds>" now (the parent's signal to
/// start: "0 …") and at each action.
func follow(_ log: String) async throws {
    let replica = try makeClicks(client, log: log)
    let running = Task { try await replica.run() }
    await replica.waitUntilCaughtUp()
    let token = replica.store.subscribe(\.count) { count in
        FileHandle.standardOutput.write(Data("\(count) \(monotonicNanoseconds())\n".utf8))
    }
    // The parent closes our standard input when it is done.
    for await _ in readLines(from: FileHandle.standardInput) {}
    token.cancel()
    running.cancel()
}

/// The p50 and p99 of `samples`, in microseconds.
func percentiles(_ samples: [Int64]) -> (p50: Double, p99: Double) {
    let sorted = samples.sorted()
    func at(_ fraction: Double) -> Double { Double(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]) / 1_000 }
    return (at(0.5), at(0.99))
}

func measureReplication(actions: Int) async throws {
    let log = "benchmark_actions_\(getpid())"
    let local = try makeClicks(client, log: log)
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await local.run() }
        await local.waitUntilCaughtUp()

        let follower = Process()
        follower.executableURL = Bundle.main.executableURL
        follower.arguments = ["--port", "\(port)", "--follow", log]
        let (input, output) = (Pipe(), Pipe())
        (follower.standardInput, follower.standardOutput) = (input, output)
        try follower.run()
        var lines = readLines(from: output.fileHandleForReading).makeAsyncIterator()
        let first = await lines.next()
        guard first?.hasPrefix("0 ") == true else { throw BenchmarkError("the follower did not start: \(first ?? "no output")") }

        try await client.query("CREATE TABLE IF NOT EXISTS benchmark_inserts (id bigserial PRIMARY KEY, value bytea)")
        let value = Data(#"{"click":{}}"#.utf8)
        var floor: [Int64] = []
        var sent: [Int64] = []
        var applied: [Int64] = []
        for _ in 0..<(actions + 50) {
            let start = monotonicNanoseconds()
            try await client.query("INSERT INTO benchmark_inserts (value) VALUES (\(value))")
            floor.append(monotonicNanoseconds() - start)
        }
        for _ in 0..<(actions + 50) {
            let start = monotonicNanoseconds()
            try await local.send(.click)
            applied.append(monotonicNanoseconds() - start)
            sent.append(start)
        }
        var remote: [Int64] = []
        while remote.count < sent.count, let line = await lines.next() {
            let fields = line.split(separator: " ").compactMap { Int64($0) }
            guard fields.count == 2, fields[0] >= 1 else { continue }
            remote.append(fields[1] - sent[Int(fields[0]) - 1])
        }
        try input.fileHandleForWriting.close()
        follower.waitUntilExit()
        group.cancelAll()

        // The first 50 of each warm up.
        let rows = [
            ("dispatch → applied here (`send`)", percentiles(Array(applied.dropFirst(50)))),
            ("dispatch → applied in another process", percentiles(Array(remote.dropFirst(50)))),
            ("bare INSERT through postgres-nio (floor)", percentiles(Array(floor.dropFirst(50)))),
        ]
        print("\nReplicatedStore on loopback, \(actions) actions one at a time (µs)")
        print("| path | p50 | p99 |")
        print("| --- | ---: | ---: |")
        for (name, (p50, p99)) in rows {
            print(String(format: "| %@ | %.0f | %.0f |", name, p50, p99))
        }
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
