import Foundation
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// A listener whose catch-up or migration waits on a lock another session holds: its heartbeat gives the wait up
/// after 15 s and tries again on a new connection, and the given-up wait leaves the server's lock queue, so that
/// waits do not pile up (one more every ~15 s, for as long as the lock is held, up to `max_connections`). A watch
/// cancelled meanwhile is never called again.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct ListenerLockWaitTests {
    /// Another session holds the storage's table locked (a maintenance `ALTER TABLE`, or one queued behind a long
    /// transaction, does so): the listener's catch-up waits for the lock, its heartbeat waits behind it, and after
    /// 15 s the listener closes the connection and tries again on a new one. The server does not see a client close
    /// while its backend waits for a lock, so the given-up catch-up must be ended on the server: no session of it
    /// stays in the lock queue, and once the lock is gone a change reaches the watcher once.
    @Test func aCatchUpGivenUpOnALockLeavesNoSessionWaitingForIt() async throws {
        try await withWatchedStorage { try await Self.catchUpGivenUp($0, $1, $2) }
    }

    static func catchUpGivenUp(_ storage: PostgresStorage, _ calls: WatchCalls, _ first: Int32) async throws {
        do {
            defer { releaseHolder("lock_holder_catch_up") }
            let waiting = "wait_event_type = 'Lock' AND query LIKE '%unnest%'"
            try await holdUpTheCatchUp(of: storage, listener: first, as: "lock_holder_catch_up", waiting: waiting)
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
            releaseHolder("lock_holder_catch_up")
            // Once the lock is gone: a change reaches the watcher once.
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually { calls.count == 2 })
            try await saveFromAnotherClient("2", in: storage)
            #expect(await eventually { calls.count == 3 })
            #expect(calls.count == 3)
        }
    }

    /// The last watch cancelled while the listener's catch-up waits on a lock, a new watch added at once: once the
    /// lock is gone, one listening session, the old watcher never called again, the new one called once per change.
    @Test func theLastWatchCancelledWhileTheCatchUpWaitsThenANewOne() async throws {
        try await withStorage { storage in
            let calls = WatchCalls()
            let watch = try storage.watchChanges(of: "k") { calls() }
            #expect(await eventually { calls.count == 1 })
            let first = try await theListeningSession(of: storage)
            try await holdLocked(storage.table, as: "lock_holder_cancel")
            defer { releaseHolder("lock_holder_cancel") }
            _ = try cluster.sql("SELECT pg_terminate_backend(\(first))")
            let waiting = "wait_event_type = 'Lock' AND query LIKE '%unnest%'"
            #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).count == 1 })
            watch.cancel()
            let again = WatchCalls()
            let next = try storage.watchChanges(of: "k") { again() }
            defer { next.cancel() }
            releaseHolder("lock_holder_cancel")
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
}
