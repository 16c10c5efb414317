import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// Changes by others reach watchers by push, once each, across lost connections.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct PostgresWatchTests {
    @Test func aWatchStartsWithOneCallOnceLive() async throws {
        try await withStorage { storage in
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            #expect(await eventually { calls.count == 1 })
            watch.cancel()
        }
    }

    @Test func aChangeByAnotherClientIsPushed() async throws {
        try await withStorage { storage in
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            #expect(await eventually { calls.count == 1 })
            try await withClient { otherClient in
                let other = PostgresStorage(client: otherClient, table: storage.table)
                try other.save(Data("1".utf8), key: "k")
                #expect(await eventually { calls.count == 2 })
                try other.save(Data("1".utf8), key: "other key")
                try other.remove(key: "k")
                #expect(await eventually { calls.count == 3 })
                // Removing what is not there changes nothing: the next call is the next save's.
                try other.remove(key: "k")
                try other.save(Data("2".utf8), key: "k")
                #expect(await eventually { calls.count == 4 })
            }
            watch.cancel()
        }
    }

    @Test func aChangeByAnotherProcessIsPushed() async throws {
        try await withStorage { storage in
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "pushed") { calls() }
            #expect(await eventually { calls.count == 1 })
            let worker = try Worker(try cluster.processArguments + ["--table", storage.table, "--key", "pushed", "save", "42"])
            #expect(await worker.line(startingWith: "done") != nil)
            #expect(await worker.finish() == 0)
            #expect(await eventually { calls.count == 2 })
            #expect(try storage.load(key: "pushed") == Data("42".utf8))
            watch.cancel()
        }
    }

    @Test func aRolledBackWriteIsNeverAnnounced() async throws {
        try await withStorage { storage in
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            #expect(await eventually { calls.count == 1 })
            struct Refused: Error {}
            #expect(throws: Refused.self) { try storage.transact(key: "k") { _ in throw Refused() } }
            try storage.save(Data("after".utf8), key: "k")
            #expect(await eventually { calls.count == 2 })
            // The save's call came, and nothing before it: the rolled-back transaction was not announced.
            try storage.save(Data("again".utf8), key: "k")
            #expect(await eventually { calls.count == 3 })
            watch.cancel()
        }
    }

    @Test func aChangeMadeWhileTheListenerWasAwayIsDeliveredOnce() async throws {
        try await withStorage { storage in
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            #expect(await eventually { calls.count == 1 })
            // Keep the listener away while the change is made: new connections to the database are refused
            // meanwhile (set from another database: a database cannot refuse its own connections), and this test's
            // own connection, opened before, makes the change.
            let table = storage.table
            try await withClient { admin in
                try await admin.withConnection { connection in
                    _ = try await Self.changeKWhileEveryOtherSessionIsAway(table, on: connection)
                    try cluster.sql("ALTER DATABASE postgres WITH ALLOW_CONNECTIONS true", database: "template1")
                }
            }
            #expect(await eventually { calls.count == 2 })
            // One call for the change made away: the next one is the next change's.
            try storage.save(Data("2".utf8), key: "k")
            #expect(await eventually { calls.count == 3 })
            #expect(calls.count == 3)
            watch.cancel()
        }
    }

    /// The listener is back, but its first reading of the versions fails (here: the table is locked and new sessions
    /// give up on a lock after 100 ms): the change made while it was away must still be delivered, not wait for the
    /// next change.
    @Test func aChangeMadeWhileTheListenerWasAwayIsDeliveredEvenIfTheFirstCatchUpFails() async throws {
        try await withStorage { storage in
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            defer { watch.cancel() }
            #expect(await eventually { calls.count == 1 })
            let table = storage.table
            let logger = Logger(label: "test")
            try await withClient { admin in
                try await admin.withConnection { connection in
                    // Sessions that start from now on give up on a lock after 100 ms.
                    try cluster.sql("ALTER DATABASE postgres SET lock_timeout = '100ms'", database: "template1")
                    defer { _ = try? cluster.sql("ALTER DATABASE postgres RESET lock_timeout", database: "template1") }
                    _ = try await Self.changeKWhileEveryOtherSessionIsAway(table, on: connection)
                    try await connection.query("BEGIN", logger: logger)
                    try await connection.query("LOCK TABLE \(unescaped: table) IN ACCESS EXCLUSIVE MODE", logger: logger)
                    let timedOutBefore = try serverLog(count: "due to lock timeout")
                    try cluster.sql("ALTER DATABASE postgres WITH ALLOW_CONNECTIONS true", database: "template1")
                    // The listener listens again and reads the versions, which gives up on the lock (after its
                    // listening connection's own 5 s). Told by the server's log: the listener closes that
                    // connection at once, too soon for `pg_stat_activity` to be sure to show it.
                    #expect(await eventually(every: psqlPolling) {
                        ((try? serverLog(count: "due to lock timeout")) ?? 0) > timedOutBefore
                    })
                    try await connection.query("COMMIT", logger: logger)
                }
            }
            #expect(await eventually { calls.count == 2 }, "the change made while the listener was away never came")
        }
    }

    /// A watch added while the listener listens is live at once: its first call must not depend on a query, which
    /// here cannot run (another session holds the table locked, and new sessions give up on a lock after 100 ms).
    @Test func aWatchAddedWhileListeningGetsItsFirstCallWhenNoQueryCanRun() async throws {
        try await withStorage { storage in
            let (first, second) = (WatchCalls(), WatchCalls())
            let watch = try storage.watchChanges(of: "a") { first() }
            defer { watch.cancel() }
            #expect(await eventually { first.count == 1 })
            let logger = Logger(label: "test")
            try await withClient { admin in
                try await admin.withConnection { connection in
                    try cluster.sql("ALTER DATABASE postgres SET lock_timeout = '100ms'", database: "template1")
                    defer { _ = try? cluster.sql("ALTER DATABASE postgres RESET lock_timeout", database: "template1") }
                    try await connection.query("BEGIN", logger: logger)
                    try await connection.query(
                        "LOCK TABLE \(unescaped: storage.table) IN ACCESS EXCLUSIVE MODE", logger: logger
                    )
                    let late = try storage.watchChanges(of: "b") { second() }
                    defer { late.cancel() }
                    #expect(await eventually { second.count == 1 }, "the watch's first call waited for a query")
                    try await connection.query("COMMIT", logger: logger)
                    try storage.save(Data("1".utf8), key: "b")
                    #expect(await eventually { second.count == 2 })
                }
            }
        }
    }

    /// Stores "1" under the key "k" of `table` through `connection` while every other session of the database is
    /// away: new connections are refused (set from another database: a database cannot refuse its own connections)
    /// and the open ones ended. The caller allows connections again. Returns `connection`'s backend pid.
    private static func changeKWhileEveryOtherSessionIsAway(
        _ table: String, on connection: PostgresConnection
    ) async throws -> Int32 {
        let logger = Logger(label: "test")
        let pid = try await connection.query("SELECT pg_backend_pid()", logger: logger).collect()[0].decode(Int32.self)
        try cluster.sql("ALTER DATABASE postgres WITH ALLOW_CONNECTIONS false", database: "template1")
        try cluster.sql(
            """
            SELECT pg_terminate_backend(pid) FROM pg_stat_activity
            WHERE datname = 'postgres' AND pid <> \(pid) AND backend_type = 'client backend'
            """,
            database: "template1"
        )
        try await connection.query(
            """
            INSERT INTO \(unescaped: table) (key_digest, key, value, version)
            VALUES (sha256(convert_to('k', 'UTF8')), 'k', '\\x31', nextval('\(unescaped: table)_version'))
            """,
            logger: logger
        )
        return pid
    }

    /// The listening connection's server process stops answering without closing anything (SIGSTOP: to the
    /// client, as a connection a NAT forgot): nothing would ever end the wait for notifications. The heartbeat finds
    /// it out, and the storage listens on a new connection and catches up with the change made meanwhile.
    @Test func aListenerWhoseConnectionStopsAnsweringComesBackAndCatchesUp() async throws {
        try await withWatchedStorage { storage, calls, listener in
            #expect(kill(listener, SIGSTOP) == 0)
            defer { kill(listener, SIGCONT) }
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually(timeout: .seconds(120)) { calls.count == 2 }, "the listener never came back")
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

    /// The listening connection terminated again and again: after each, a change made by another client reaches
    /// the watcher, and a watch added just after the termination (while the listener may still think it listens)
    /// gets its first call.
    @Test func watchesFollowChangesAcrossRepeatedlyTerminatedListeners() async throws {
        let cluster = try cluster
        try await withStorage { storage in
            let calls = Recorder<Void>()
            let watch = try storage.watchChanges(of: "k") { calls.append(()) }
            #expect(await eventually { calls.count == 1 })
            try await withClient { otherClient in
                let other = PostgresStorage(client: otherClient, table: storage.table)
                for round in 1...10 {
                    _ = try cluster.terminateConnections()
                    let firstCalls = Recorder<Void>()
                    let added = try storage.watchChanges(of: "added \(round)") { firstCalls.append(()) }
                    try await onThread { try other.save(Data("\(round)".utf8), key: "k") }
                    #expect(await eventually { calls.count >= round + 1 }, "round \(round): the change was not reported")
                    #expect(await eventually { firstCalls.count >= 1 }, "round \(round): no first call")
                    added.cancel()
                }
            }
            watch.cancel()
        }
    }

    @Test func cancelledWatchesAreNotCalled() async throws {
        try await withStorage { storage in
            let (cancelled, kept) = (WatchCalls(), WatchCalls())
            let first = try storage.watchChanges(of: "k") { cancelled() }
            let second = try storage.watchChanges(of: "k") { kept() }
            #expect(await eventually { cancelled.count == 1 && kept.count == 1 })
            first.cancel()
            try storage.save(Data("1".utf8), key: "k")
            #expect(await eventually { kept.count == 2 })
            #expect(cancelled.count == 1)
            second.cancel()
        }
    }

    @Test func aContainerFollowsAnotherProcess() async throws {
        try await withStorage { storage in
            // Followed by polling (a container may also watch): the storage's fingerprints tell it of the change.
            let counter = StateContainer(0, key: "followed", storage: storage, externalChanges: .poll(every: .milliseconds(50)))
            let seen = Recorder<Int>()
            let token = counter.observe { seen.append($0) }
            let worker = try Worker(try cluster.processArguments + ["--table", storage.table, "--key", "followed", "save", "7"])
            #expect(await worker.finish() == 0)
            #expect(await eventually { counter.value == 7 })
            #expect(seen.elements == [7])
            token.cancel()
        }
    }
}
