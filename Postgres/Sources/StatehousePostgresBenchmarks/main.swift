import Foundation
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres

// Release-mode figures for PostgresStorage on loopback, each beside a bare upsert through postgres-nio measured in
// the same run (the floor: one statement on a pooled connection, from async code, with no blocking bridge):
//
//   swift run -c release --package-path Postgres StatehousePostgresBenchmarks [--port P] [--operations N]
//       [--actions N] [--changes N] [--increments N]
//
// Without --port it starts a private cluster (initdb and pg_ctl, as the tests do) and stops it at the end. Then a
// ReplicatedStore's latencies over `--actions` actions (500 by default; see Replication.swift), and the storage
// across processes: `--changes` changes heard by another process (500), `--increments` updates per process from 1,
// 2 and 4 processes (300; see AcrossProcesses.swift).

func option(_ name: String) -> String? {
    let arguments = CommandLine.arguments
    return arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}

let operations = option("--operations").flatMap(Int.init) ?? 2_000
let following = option("--follow")
let ownCluster = option("--port") == nil ? try PostgresTestCluster.start() : nil
defer { ownCluster?.stop() }
let port = option("--port").flatMap(Int.init) ?? ownCluster!.port
let client = PostgresClient(configuration: .init(
    host: "127.0.0.1", port: port, username: PostgresTestCluster.user, password: nil,
    database: PostgresTestCluster.database, tls: .disable
))
let logger = Logger(label: "benchmark")

/// Microseconds per operation of `body`, run `operations` times after 100 to warm up.
func measure(_ body: () async throws -> Void) async throws -> Double {
    for _ in 0..<100 { try await body() }
    let start = ContinuousClock.now
    for _ in 0..<operations { try await body() }
    let elapsed = start.duration(to: .now)
    return Double(elapsed.components.seconds) * 1e6 / Double(operations)
        + Double(elapsed.components.attoseconds) / 1e12 / Double(operations)
}

func run() async throws {
    let storage = PostgresStorage(client: client, table: "benchmark_state")
    try await storage.migrate()
    let value = Data(#"{"count":12345,"name":"benchmark"}"#.utf8)
    try await client.query("CREATE TABLE IF NOT EXISTS benchmark_floor (key text PRIMARY KEY, value bytea NOT NULL)")

    var rows: [(String, Double, Double)] = []
    let floor = try await measure {
        try await client.query("""
            INSERT INTO benchmark_floor (key, value) VALUES ('k', \(value))
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """)
    }
    let save = try await measure { try storage.save(value, key: "k") }
    rows.append(("storage.save", save, floor))
    let transact = try await measure {
        _ = try storage.transact(key: "counter") { data in
            Data(String((data.flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0) + 1).utf8)
        }
    }
    rows.append(("storage.transact (+1)", transact, floor))
    let counter = StateContainer(0, key: "container", storage: storage, writes: .writeThrough, externalChanges: .ignore)
    rows.append(("container.modify, write-through", try await measure { counter.modify(counter.value + 1) }, floor))
    rows.append(("container.update { $0 += 1 }", try await measure { counter.update { $0 += 1 } }, floor))
    rows.append(("storage.fingerprint", try await measure { _ = try storage.fingerprint(key: "k") }, floor))

    print("PostgresStorage on loopback, \(operations) operations each (µs per operation)")
    print("| operation | µs/op | bare INSERT … ON CONFLICT through postgres-nio | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for (name, microseconds, baseline) in rows {
        print(String(format: "| %@ | %.1f | %.1f | %.2f× |", name, microseconds, baseline, microseconds / baseline))
    }
}

await withTaskGroup(of: Void.self) { group in
    group.addTask(executorPreference: PostgresStorage.executor) { await client.run() }
    do {
        if let following {
            try await follow(following)
        } else if let table = option("--watch") {
            await watchForLatency(table: table)
        } else if let channel = option("--listen") {
            try await listenBare(channel: channel)
        } else if let table = option("--increment"), let count = CommandLine.arguments.last.flatMap(Int.init) {
            try await incrementOnSignal(table: table, count: count)
        } else {
            try await run()
            try await measureReplication(actions: option("--actions").flatMap(Int.init) ?? 500)
            try await measureAcrossProcesses(
                changes: option("--changes").flatMap(Int.init) ?? 500,
                increments: option("--increments").flatMap(Int.init) ?? 300
            )
        }
    } catch {
        print("benchmark failed: \(error)")
    }
    group.cancelAll()
}
