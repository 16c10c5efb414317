import Foundation
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

// Waits given up on a lock do not pile up: each test watches a lock held for five heartbeats (75 s) and counts the
// sessions waiting for it. Two suites, each with a cluster of its own, so that the two waits run side by side
// instead of one after the other: they spend their time waiting, not computing.

/// The listener's catch-up waits on the storage's table, locked by another session.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct TableLockWaitsDoNotPileUpTests {
    /// A catch-up given up on a lock (see ``ListenerLockWaitTests``), counted over five heartbeats: while the lock
    /// is held, the storage's sessions waiting for it never grow past two; once it is gone, none waits, one
    /// listens, and a change is pushed.
    @Test func sessionsWaitingOnALockDoNotPileUpWhileItIsHeld() async throws {
        try await withWatchedStorage { try await Self.pileUp($0, $1, $2) }
    }

    static func pileUp(_ storage: PostgresStorage, _ calls: WatchCalls, _ first: Int32) async throws {
        do {
            defer { releaseHolder("lock_holder_pile_up") }
            let waiting = "wait_event_type = 'Lock'"
            try await holdUpTheCatchUp(of: storage, listener: first, as: "lock_holder_pile_up", waiting: waiting)
            let piledUp = try await eventually(timeout: .seconds(75), every: psqlPolling) {
                try sessions(of: storage, where: waiting).count >= 3
            }
            let seen = try sessions(of: storage, where: waiting)
            #expect(!piledUp, "the storage's sessions waiting for the lock: \(seen)")
            releaseHolder("lock_holder_pile_up")
            #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).isEmpty })
            try await saveFromAnotherClient("1", in: storage)
            #expect(await eventually { calls.count == 2 })
            #expect(try await eventually(every: psqlPolling) { try listeningSessions(of: storage).count == 1 })
        }
    }
}

/// The listener's migration waits on Statehouse's migration lock, held by another process.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct MigrationLockWaitsDoNotPileUpTests {
    /// Another process holds Statehouse's migration lock (its own migration waits on a table lock, say). The
    /// listener's migration waits for it and its heartbeat gives the wait up after 15 s: the given-up waits do not
    /// pile up, and once the lock is gone the watch gets its first call and nothing waits.
    @Test func migrationsWaitingOnTheMigrationLockDoNotPileUp() async throws {
        try holdInPsql("""
            SET application_name = 'lock_holder_migration'; BEGIN;
            SELECT pg_advisory_xact_lock(6013538554991898485); SELECT pg_sleep(600);
            """)
        defer { releaseHolder("lock_holder_migration") }
        #expect(try await eventually(every: psqlPolling) { try sessions(named: "lock_holder_migration", where: "wait_event = 'PgSleep'").count == 1 })
        try await withStorage { try await Self.migrationPileUp($0) }
    }

    static func migrationPileUp(_ storage: PostgresStorage) async throws {
        let calls = WatchCalls()
        let watch = try storage.watchChanges(of: "k") { calls() }
        defer { watch.cancel() }
        let waiting = "wait_event_type = 'Lock' AND query LIKE '%advisory%'"
        #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).count >= 1 })
        let piledUp = try await eventually(timeout: .seconds(75), every: psqlPolling) {
            try sessions(of: storage, where: waiting).count >= 3
        }
        let seen = try sessions(of: storage, where: waiting)
        #expect(!piledUp, "the storage's sessions waiting for the migration lock: \(seen)")
        releaseHolder("lock_holder_migration")
        #expect(await eventually { calls.count == 1 })
        #expect(try await eventually(every: psqlPolling) { try sessions(of: storage, where: waiting).isEmpty })
    }
}
