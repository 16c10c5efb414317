import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Counts the calls of a watch.
final class WatchCalls: Sendable {
    let recorder = Recorder<Void>()
    var count: Int { recorder.count }
    func callAsFunction() { recorder.append(()) }
}

/// Holds `table` locked (ACCESS EXCLUSIVE) from a psql session named `holder` until ``releaseHolder(_:)``; returns
/// once the server shows it holding the lock.
func holdLocked(_ table: String, as holder: String) async throws {
    try holdInPsql("""
        SET application_name = '\(holder)'; BEGIN;
        LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600);
        """)
    #expect(try await eventually(every: psqlPolling) {
        try sessions(named: holder, where: "wait_event = 'PgSleep'").count == 1
    })
}

/// Ends the session `holder` (and what it holds); does nothing if it has ended.
func releaseHolder(_ holder: String) {
    _ = try? cluster.sql(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(holder)'"
    )
}

/// Locks `storage`'s table as `holder` and ends its listener's server process `listener`: the listener's next
/// catch-up waits for the lock. Returns once one of the storage's sessions matching `waiting` does.
func holdUpTheCatchUp(
    of storage: PostgresStorage, listener: Int32, as holder: String, waiting: String
) async throws {
    try await holdLocked(storage.table, as: holder)
    _ = try cluster.sql("SELECT pg_terminate_backend(\(listener))")
    #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).count >= 1 })
}

/// Makes `count` connections of `client` at once and gives them back to its pool, idle.
func fillPool(_ client: PostgresClient, count: Int) async throws {
    let logger = Logger(label: "test")
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<count {
            group.addTask {
                try await client.withConnection { connection in
                    _ = try await connection.query("SELECT pg_sleep(0.5) /* filling the pool */", logger: logger)
                }
            }
        }
        try await group.waitForAll()
    }
}

/// The server's end of the TCP connection of the server process `pid`, as /proc/net/tcp shows it: its state
/// (`0x08`: the client closed its end) and the bytes received but not read by the (stopped) backend; `nil` once the
/// process is gone.
func serverSocket(of pid: Int32) throws -> (state: Int, unread: Int)? {
    let clientPort = try cluster.sql("SELECT client_port FROM pg_stat_activity WHERE pid = \(pid)")
    guard let client = Int(clientPort.trimmingCharacters(in: .whitespacesAndNewlines)) else { return nil }
    let serverPort = try #require(Int(try cluster.sql("SHOW port").trimmingCharacters(in: .whitespacesAndNewlines)))
    // Read to the end: the file's size says 0.
    let file = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/net/tcp"))
    defer { try? file.close() }
    let table = String(decoding: try file.readToEnd() ?? Data(), as: UTF8.self)
    for line in table.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 4 else { continue }
        let local = fields[1].split(separator: ":"), remote = fields[2].split(separator: ":")
        guard local.count == 2, remote.count == 2, Int(local[1], radix: 16) == serverPort,
            Int(remote[1], radix: 16) == client
        else { continue }
        let queues = fields[4].split(separator: ":")
        return (Int(fields[3], radix: 16) ?? -1, Int(queues.last ?? "", radix: 16) ?? -1)
    }
    return nil
}

/// How often the suite's server log says `text`.
func serverLog(count text: String) throws -> Int {
    let log = try String(contentsOf: try cluster.directory.appendingPathComponent("server.log"), encoding: .utf8)
    return log.components(separatedBy: text).count - 1
}
