import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// A listening connection whose server process stops answering without closing anything (SIGSTOP: to the client,
/// as a connection a NAT forgot) is found out by the listener's heartbeat, from the lease on: the listener comes back
/// on a new connection and catches up, and a cancelled watch or a client shut down still ends it.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct ListenerHeartbeatTests {
    /// The last watch cancelled while the heartbeat waits for the stopped listening backend's answer: the listener
    /// closes its connection without the backend's help, leaves no session behind once the backend runs again, and a
    /// new watch listens afresh.
    @Test func cancellingTheLastWatchWhileTheHeartbeatIsUnansweredEndsTheListener() async throws {
        try await withStorage { storage in
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            #expect(await eventually { calls.count == 1 })
            let listener = try await theListeningSession(of: storage)
            #expect(kill(listener, SIGSTOP) == 0)
            var continued = false
            defer { if !continued { kill(listener, SIGCONT) } }
            // The heartbeat's query waits, unread, in the stopped backend's socket.
            #expect(
                try await eventually(every: psqlPolling) { (try serverSocket(of: listener)?.unread ?? 0) > 0 },
                "the heartbeat never reached the stopped backend"
            )
            watch.cancel()
            #expect(
                try await eventually(every: psqlPolling) { try serverSocket(of: listener)?.state == 0x08 },
                "the cancelled listener did not close its connection"
            )
            #expect(kill(listener, SIGCONT) == 0)
            continued = true
            #expect(try await eventually(every: psqlPolling) { try listeningSessions(of: storage).isEmpty }, "a listening session was left")

            try await expectANewWatchFollows(storage)
            #expect(calls.count == 1)
        }
    }

    /// The listener's server process stops answering while the listener catches up after a reconnection (its
    /// catch-up waits on a table lock, and is then stopped), before it waits for notifications: the heartbeat covers
    /// the catch-up too, so the listener comes back and the change made meanwhile arrives.
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

    /// The storage's pool holds idle connections whose server processes hang, and the listener loses its
    /// connection: it leases one of those, and its `LISTEN` is never answered. The heartbeat, running from the lease
    /// on, replaces it; a change made meanwhile arrives once.
    @Test func aListenerLeasingASilentlyDeadPooledConnectionComesBack() async throws {
        let table = uniqueTable()
        let configuration = try clientConfiguration(named: table)
        let stopped = Recorder<Int32>()
        defer { for pid in stopped.elements { kill(pid, SIGCONT) } }
        try await withClient(configuration: configuration) { client in
            let storage = PostgresStorage(client: client, table: table)
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            defer { watch.cancel() }
            #expect(await eventually { calls.count == 1 })
            let listener = try await theListeningSession(of: storage)
            try await fillPool(client, count: 2)
            for pid in try sessions(of: storage, where: "pid <> \(listener) AND state = 'idle'") {
                stopped.append(pid)
                kill(pid, SIGSTOP)
            }
            #expect(stopped.elements.count >= 1)
            _ = try cluster.sql("SELECT pg_terminate_backend(\(listener))")
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually(timeout: .seconds(120)) { calls.count == 2 }, "the listener never came back")
            try await saveFromAnotherClient("2", in: storage)
            #expect(await eventually { calls.count == 3 })
            #expect(calls.count == 3)
        }
    }

    /// The last watch cancelled while `LISTEN` waits on a stopped backend (the pool handed over a hanging connection),
    /// a new watch at once: the new one listens, and the stopped session is closed.
    @Test func theLastWatchCancelledWhileListenIsUnansweredThenANewOne() async throws {
        let table = uniqueTable()
        let configuration = try clientConfiguration(named: table)
        let stopped = Recorder<Int32>()
        defer { for pid in stopped.elements { kill(pid, SIGCONT) } }
        try await withClient(configuration: configuration) { client in
            let storage = PostgresStorage(client: client, table: table)
            // Migrated, and the pool holds an idle connection.
            try await onThread { try storage.save(Data("0".utf8), key: "other") }
            try await fillPool(client, count: 1)
            for pid in try sessions(of: storage, where: "state = 'idle'") {
                stopped.append(pid)
                kill(pid, SIGSTOP)
            }
            #expect(stopped.elements.count >= 1)
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            // LISTEN sent to a stopped backend: it waits unread in its socket.
            #expect(try await eventually(every: psqlPolling) {
                try stopped.elements.contains { pid in
                    (try serverSocket(of: pid)?.unread ?? 0) > 0
                }
            })
            watch.cancel()
            let again = WatchCalls()
            let next = try storage.watchChanges(of: "k") { again() }
            defer { next.cancel() }
            #expect(await eventually { again.count == 1 })
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually { again.count == 2 })
            #expect(calls.count == 0)
            // Once the stopped sessions run again, the cancelled listener's is closed: one listening session left.
            for pid in stopped.elements { kill(pid, SIGCONT) }
            #expect(try await eventually(every: psqlPolling) { try listeningSessions(of: storage).count == 1 })
        }
    }

    /// The client shut down while the listener's `LISTEN` waits on a hanging pooled connection: the client's run()
    /// ends, the listener ends, and nothing is reported.
    @Test func aClientShutDownWhileListenIsUnansweredEndsSilently() async throws {
        let table = uniqueTable()
        let configuration = try clientConfiguration(named: table)
        let stopped = Recorder<Int32>()
        defer { for pid in stopped.elements { kill(pid, SIGCONT) } }
        let diagnostics = Recorder<StatehouseDiagnostic>()
        let ended = Recorder<Bool>()
        let watches = Recorder<StorageWatch>()
        let client = PostgresClient(configuration: configuration)
        let run = Task(executorPreference: PostgresStorage.executor) {
            await client.run()
            ended.append(true)
        }
        try await StatehouseDiagnostics.$handler.withValue({ diagnostics.append($0) }) {
            let storage = PostgresStorage(client: client, table: table)
            try await onThread { try storage.save(Data("0".utf8), key: "other") }
            try await fillPool(client, count: 1)
            for pid in try sessions(of: storage, where: "state = 'idle'") {
                stopped.append(pid)
                kill(pid, SIGSTOP)
            }
            #expect(stopped.elements.count >= 1)
            watches.append(try storage.watchChanges(of: "k") {})
            #expect(try await eventually(every: psqlPolling) {
                try stopped.elements.contains { pid in
                    (try serverSocket(of: pid)?.unread ?? 0) > 0
                }
            })
            run.cancel()
            #expect(await eventually(timeout: .seconds(60)) { !ended.elements.isEmpty }, "the client's run() never ended")
        }
        for pid in stopped.elements { kill(pid, SIGCONT) }
        #expect(try await eventually(every: psqlPolling) { try sessions(named: table).isEmpty }, "sessions were left")
        #expect(diagnostics.elements.isEmpty, "\(diagnostics.elements)")
        _ = watches
    }
}
