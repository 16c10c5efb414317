import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// The listening connection's heartbeat (Heartbeat.swift): a cancelled watch ends the listener even while its
/// server process is stopped, and a listener terminated while idle comes back and catches up.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct AttackHeartbeatTests {
    typealias Calls = PostgresWatchTests.Calls

    /// The server's end of a session's TCP connection, as /proc/net/tcp shows it: its state (`0x08`: the client
    /// closed its end) and the bytes received but not read by the (stopped) backend.
    static func serverSocket(of pid: Int32) throws -> (state: Int, unread: Int)? {
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

    /// The last watch cancelled while the heartbeat waits for the stopped listening backend's answer: the listener
    /// closes its connection without the backend's help, leaves no session behind once the backend runs again, and a
    /// new watch listens afresh.
    @Test func cancellingTheLastWatchWhileTheHeartbeatIsUnansweredEndsTheListener() async throws {
        try await withStorage { storage in
            let calls = Calls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            #expect(await eventually { calls.count == 1 })
            let listener = try await theListeningSession(of: storage)
            #expect(kill(listener, SIGSTOP) == 0)
            var continued = false
            defer { if !continued { kill(listener, SIGCONT) } }
            // The heartbeat's query waits, unread, in the stopped backend's socket.
            #expect(
                try await eventually(every: psqlPolling) { (try Self.serverSocket(of: listener)?.unread ?? 0) > 0 },
                "the heartbeat never reached the stopped backend"
            )
            watch.cancel()
            #expect(
                try await eventually(every: psqlPolling) { try Self.serverSocket(of: listener)?.state == 0x08 },
                "the cancelled listener did not close its connection"
            )
            #expect(kill(listener, SIGCONT) == 0)
            continued = true
            #expect(try await eventually(every: psqlPolling) { try listeningSessions(of: storage).isEmpty }, "a listening session was left")

            try await expectANewWatchFollows(storage)
            #expect(calls.count == 1)
        }
    }

    /// The listening backend terminated while idle (an error, not a timeout): the listener listens again and catches
    /// up with a change made meanwhile, once.
    @Test func aListenerTerminatedWhileIdleComesBackAndCatchesUp() async throws {
        try await withWatchedStorage { storage, calls, listener in
            _ = try cluster.sql("SELECT pg_terminate_backend(\(listener))")
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually { calls.count == 2 })
            #expect(try await eventually(every: psqlPolling) { try listeningSessions(of: storage).filter { $0 != listener }.count == 1 })
            try await saveFromAnotherClient("2", in: storage)
            #expect(await eventually { calls.count == 3 })
            #expect(calls.count == 3)
        }
    }

    /// The listener's server process stops answering while the listener catches up after a reconnection (here: its
    /// catch-up waits on a table lock, and is then stopped), before it waits for notifications. The heartbeat ran
    /// only during that wait, so the catch-up waited forever and the change made meanwhile never came.
    @Test func aListenerWhoseConnectionStopsAnsweringWhileCatchingUpComesBack() async throws {
        try await withWatchedStorage { storage, calls, first in
            let logger = Logger(label: "test")
            let stopped = Recorder<Int32>()
            defer { for pid in stopped.elements { kill(pid, SIGCONT) } }
            try await withClient { admin in
                try await admin.withConnection { connection in
                    try await connection.query("BEGIN", logger: logger)
                    try await connection.query(
                        "LOCK TABLE \(unescaped: storage.table) IN ACCESS EXCLUSIVE MODE", logger: logger
                    )
                    _ = try cluster.sql("SELECT pg_terminate_backend(\(first))")
                    let waiting = "wait_event_type = 'Lock' AND query LIKE '%unnest%'"
                    #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).count == 1 })
                    let pid = try #require(try sessions(of: storage, where: waiting).first)
                    stopped.append(pid)
                    #expect(kill(pid, SIGSTOP) == 0)
                    try await connection.query("COMMIT", logger: logger)
                }
            }
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually(timeout: .seconds(120)) { calls.count == 2 }, "the listener never came back")
        }
    }
}
