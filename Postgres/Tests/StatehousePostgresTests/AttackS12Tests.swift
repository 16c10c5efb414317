import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// The session-12 review of the listener's heartbeat from the lease on (68dc7a6): a catch-up or migration waiting on
/// a lock, silently dead pooled connections, cancellation at each stage.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct AttackS12Tests {
    typealias Calls = PostgresWatchTests.Calls

    /// Holds `table` locked (ACCESS EXCLUSIVE) from a psql session named `holder` until ``release(_:)``.
    static func lock(_ table: String, as holder: String) async throws {
        try holdInPsql("""
            SET application_name = '\(holder)'; BEGIN;
            LOCK TABLE \(table) IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600);
            """)
        #expect(try await eventually(every: psqlPolling) { try sessions(named: holder, where: "wait_event = 'PgSleep'").count == 1 })
    }

    /// Locks `storage`'s table as `holder` and ends its listener's session `first`: the listener's next catch-up
    /// waits for the lock. Returns once one of the storage's sessions matching `waiting` does.
    static func holdUpTheCatchUp(
        of storage: PostgresStorage, listener first: Int32, as holder: String, waiting: String
    ) async throws {
        try await lock(storage.table, as: holder)
        _ = try cluster.sql("SELECT pg_terminate_backend(\(first))")
        #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).count >= 1 })
    }

    /// Ends the session `holder` (and its lock); does nothing if it has ended.
    static func release(_ holder: String) {
        _ = try? cluster.sql(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(holder)'"
        )
    }

    /// Makes `count` connections of `client` at once and gives them back to its pool, idle.
    static func fillPool(_ client: PostgresClient, count: Int) async throws {
        let logger = Logger(label: "test")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<count {
                group.addTask {
                    try await client.withConnection { connection in
                        _ = try await connection.query("SELECT pg_sleep(0.5) /* s12 fill */", logger: logger)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    // MARK: A catch-up waiting on a lock

    /// Another session holds the storage's table locked (a maintenance `ALTER TABLE`, or one queued behind a long
    /// transaction, does so): the listener's catch-up waits for the lock, its heartbeat waits behind it, and after
    /// 15 s the listener closes the connection and tries again on a new one. The server does not see a client close
    /// while its backend waits for a lock: the given-up catch-up's session stays in the lock queue, and one more
    /// joins it every ~15 s for as long as the lock is held (max_connections is the limit).
    @Test func aCatchUpGivenUpOnALockLeavesNoSessionWaitingForIt() async throws {
        try await withWatchedStorage { try await Self.catchUpGivenUp($0, $1, $2) }
    }

    static func catchUpGivenUp(_ storage: PostgresStorage, _ calls: Calls, _ first: Int32) async throws {
        do {
            defer { Self.release("s12_holder_a") }
            let waiting = "wait_event_type = 'Lock' AND query LIKE '%unnest%'"
            try await Self.holdUpTheCatchUp(of: storage, listener: first, as: "s12_holder_a", waiting: waiting)
            let givenUp = try #require(try sessions(of: storage, where: waiting).first)
            // The heartbeat gives that catch-up up, and the listener catches up again on a new connection.
            let retried = try await eventually(timeout: .seconds(60), every: psqlPolling) {
                try sessions(of: storage, where: waiting).contains { $0 != givenUp }
            }
            if retried {
                let gone = try await eventually(timeout: .seconds(30), every: psqlPolling) {
                    try !sessions(of: storage).contains(givenUp)
                }
                let seen = try sessions(of: storage, where: waiting)
                #expect(gone, """
                    the given-up catch-up's session \(givenUp) still waits for the lock; \
                    the storage's sessions waiting for it: \(seen)
                    """)
            }
            Self.release("s12_holder_a")
            // Once the lock is gone: a change reaches the watcher once.
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually { calls.count == 2 })
            try await saveFromAnotherClient("2", in: storage)
            #expect(await eventually { calls.count == 3 })
            #expect(calls.count == 3)
        }
    }

    /// The same pile-up, counted: while the lock is held, the storage's sessions waiting for it grow past two.
    @Test func sessionsWaitingOnALockDoNotPileUpWhileItIsHeld() async throws {
        try await withWatchedStorage { try await Self.pileUp($0, $1, $2) }
    }

    static func pileUp(_ storage: PostgresStorage, _ calls: Calls, _ first: Int32) async throws {
        do {
            defer { Self.release("s12_holder_b") }
            let waiting = "wait_event_type = 'Lock'"
            try await Self.holdUpTheCatchUp(of: storage, listener: first, as: "s12_holder_b", waiting: waiting)
            let piledUp = try await eventually(timeout: .seconds(75), every: psqlPolling) {
                try sessions(of: storage, where: waiting).count >= 3
            }
            let seen = try sessions(of: storage, where: waiting)
            #expect(!piledUp, "the storage's sessions waiting for the lock: \(seen)")
            Self.release("s12_holder_b")
            #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).isEmpty })
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually { calls.count == 2 })
            #expect(try await eventually(every: psqlPolling) { try listeningSessions(of: storage).count == 1 })
        }
    }

    /// The same through the migration: another process holds Statehouse's migration lock (its own migration waits on
    /// a table lock, say). The listener's migration waits for it, its heartbeat closes the connection after 15 s, and
    /// the given-up session stays queued for the lock, one more every ~15 s.
    @Test func migrationsWaitingOnTheMigrationLockDoNotPileUp() async throws {
        try holdInPsql("""
            SET application_name = 's12_holder_d'; BEGIN;
            SELECT pg_advisory_xact_lock(6013538554991898485); SELECT pg_sleep(600);
            """)
        defer { Self.release("s12_holder_d") }
        #expect(try await eventually(every: psqlPolling) { try sessions(named: "s12_holder_d", where: "wait_event = 'PgSleep'").count == 1 })
        try await withStorage { try await Self.migrationPileUp($0) }
    }

    static func migrationPileUp(_ storage: PostgresStorage) async throws {
        let calls = Calls()
        let watch = try storage.watchChanges(of: "k") { calls() }
        defer { watch.cancel() }
        let waiting = "wait_event_type = 'Lock' AND query LIKE '%advisory%'"
        #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).count >= 1 })
        let piledUp = try await eventually(timeout: .seconds(75), every: psqlPolling) {
            try sessions(of: storage, where: waiting).count >= 3
        }
        let seen = try sessions(of: storage, where: waiting)
        #expect(!piledUp, "the storage's sessions waiting for the migration lock: \(seen)")
        Self.release("s12_holder_d")
        #expect(await eventually { calls.count == 1 })
        #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).isEmpty })
    }

    // MARK: Silently dead pooled connections

    /// The storage's pool holds idle connections whose server processes hang (SIGSTOP: as a connection a NAT forgot),
    /// and the listener loses its connection: it leases one of those, and its `LISTEN` is never answered. The
    /// heartbeat from the lease on (68dc7a6) replaces it; a change made meanwhile arrives once.
    @Test func aListenerLeasingASilentlyDeadPooledConnectionComesBack() async throws {
        let table = uniqueTable()
        let configuration = try clientConfiguration(named: table)
        let stopped = Recorder<Int32>()
        defer { for pid in stopped.elements { kill(pid, SIGCONT) } }
        try await withClient(configuration: configuration) { client in
            let storage = PostgresStorage(client: client, table: table)
            let calls = Calls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            defer { watch.cancel() }
            #expect(await eventually { calls.count == 1 })
            let listener = try await theListeningSession(of: storage)
            try await Self.fillPool(client, count: 2)
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

    /// The replicated store's follower in the same place: its pool's idle connections hang, and it loses its
    /// listening connection. It leases a hanging one and sends `LISTEN` on it, with no heartbeat and no bound (its
    /// migration is bounded, its `LISTEN` is not, and the 1 s safety net starts only once `LISTEN` was answered): an
    /// action appended by another store is never applied.
    @Test func aReplicatedStoreLeasingASilentlyDeadPooledConnectionComesBack() async throws {
        let name = "s12_" + uniqueTable()
        var configuration = try clientConfiguration(named: name)
        // As the documentation recommends where connections may die silently: postgres-nio's keep-alive query on a
        // dead idle connection waits without a deadline, and leases wait behind it (a limitation of its pool).
        configuration.options.keepAliveBehavior = nil
        let stopped = Recorder<Int32>()
        defer { for pid in stopped.elements { kill(pid, SIGCONT) } }
        let log = uniqueTable()
        try await withClient(configuration: configuration) { client in
            let store = try makeReplica(client, log: log)
            try await whileRunning([store]) {
                await store.waitUntilCaughtUp()
                #expect(try await eventually(every: psqlPolling) { try sessions(named: name, where: "query LIKE 'LISTEN%'").count == 1 })
                let listener = try #require(try sessions(named: name, where: "query LIKE 'LISTEN%'").first)
                try await Self.fillPool(client, count: 3)
                for pid in try sessions(named: name, where: "pid <> \(listener) AND state = 'idle'") {
                    stopped.append(pid)
                    kill(pid, SIGSTOP)
                }
                #expect(stopped.elements.count >= 1)
                _ = try cluster.sql("SELECT pg_terminate_backend(\(listener))")
                try await withClient { other in
                    let otherStore = try makeReplica(other, log: log)
                    try await whileRunning([otherStore]) { _ = try await otherStore.send(.numbered(1)) }
                }
                let applied = await everyStore([store], appliedThrough: 1, timeout: .seconds(120))
                let seen = try cluster.sql(
                    "SELECT pid, state, left(query, 40) FROM pg_stat_activity WHERE application_name = '\(name)'"
                )
                let unread = try stopped.elements.map { "\($0): \(try AttackHeartbeatTests.serverSocket(of: $0)?.unread ?? -1)" }
                #expect(
                    applied,
                    "the store never applied the other store's action; its sessions: \(seen); bytes unread by the stopped ones: \(unread)"
                )
            }
        }
    }

    // MARK: Cancellation

    /// The last watch cancelled while the listener's catch-up waits on a lock, a new watch added at once: once the
    /// lock is gone, one listening session, the old watcher never called again, the new one called once per change.
    @Test func theLastWatchCancelledWhileTheCatchUpWaitsThenANewOne() async throws {
        try await withStorage { storage in
            let calls = Calls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            #expect(await eventually { calls.count == 1 })
            let first = try await theListeningSession(of: storage)
            try await Self.lock(storage.table, as: "s12_holder_c")
            defer { Self.release("s12_holder_c") }
            _ = try cluster.sql("SELECT pg_terminate_backend(\(first))")
            let waiting = "wait_event_type = 'Lock' AND query LIKE '%unnest%'"
            #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).count == 1 })
            watch.cancel()
            let again = Calls()
            let next = try storage.watchChanges(of: "k") { again() }
            defer { next.cancel() }
            Self.release("s12_holder_c")
            #expect(await eventually { again.count == 1 })
            #expect(try await eventually(every: psqlPolling) { try listeningSessions(of: storage).count == 1 })
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually { again.count == 2 })
            try await saveFromAnotherClient("2", in: storage)
            #expect(await eventually { again.count == 3 })
            #expect(again.count == 3)
            #expect(calls.count == 1)
            #expect(try listeningSessions(of: storage).count == 1)
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
            try await Self.fillPool(client, count: 1)
            for pid in try sessions(of: storage, where: "state = 'idle'") {
                stopped.append(pid)
                kill(pid, SIGSTOP)
            }
            #expect(stopped.elements.count >= 1)
            let calls = Calls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            // LISTEN sent to a stopped backend: it waits unread in its socket.
            #expect(try await eventually(every: psqlPolling) {
                try stopped.elements.contains { pid in
                    (try AttackHeartbeatTests.serverSocket(of: pid)?.unread ?? 0) > 0
                }
            })
            watch.cancel()
            let again = Calls()
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

    // MARK: Shutdown

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
            try await Self.fillPool(client, count: 1)
            for pid in try sessions(of: storage, where: "state = 'idle'") {
                stopped.append(pid)
                kill(pid, SIGSTOP)
            }
            #expect(stopped.elements.count >= 1)
            watches.append(try storage.watchChanges(of: "k") {})
            #expect(try await eventually(every: psqlPolling) {
                try stopped.elements.contains { pid in
                    (try AttackHeartbeatTests.serverSocket(of: pid)?.unread ?? 0) > 0
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
