#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Synchronization

/// Another writer holding timetrack's write lock on a PostgreSQL database (the advisory lock each write takes
/// first), from a psql session of its own, until ``release()``: as another server's long transaction would.
///
/// It holds the lock until told to let go, never for a fixed time, which a busy machine could spend before the test
/// even looked; and its psql waits on a thread of its own, never on Swift's cooperative pool, where it would keep
/// the test's own checks from running while it holds.
public final class PostgresWriteLockHolder: Sendable {
    /// timetrack's write lock ("time" in ASCII).
    public static let writeLock: Int64 = 0x7469_6D65

    private let database: TemporaryPostgresDatabase
    /// The holder's `application_name`, which tells its session in `pg_stat_activity`.
    private let name = "write_lock_holder_" + UUID().uuidString.prefix(8).lowercased()
    /// What psql's run ended with, once it ended.
    private let outcome = Outcome()

    /// Starts the holder's session; see ``waitUntilHeld(timeout:)``.
    public init(on database: TemporaryPostgresDatabase) throws {
        self.database = database
        try database.sql("CREATE TABLE IF NOT EXISTS write_lock_let_go (holder text)")
        // One psql statement string is one transaction: the lock is held until the loop ends.
        let sql = """
            SET application_name = '\(name)';
            SELECT pg_advisory_xact_lock(\(Self.writeLock));
            DO $$ BEGIN
                WHILE NOT EXISTS (SELECT 1 FROM write_lock_let_go WHERE holder = '\(name)') LOOP
                    PERFORM pg_sleep(0.02);
                END LOOP;
            END $$;
            """
        // The thread keeps the outcome, not the holder: `deinit` lets the lock go if the test did not.
        let outcome = outcome
        Thread.detachNewThread {
            let result = Result { try database.sql(sql) }
            outcome.value.withLock { $0 = result }
        }
    }

    deinit {
        _ = try? database.sql("INSERT INTO write_lock_let_go VALUES ('\(name)')")
    }

    /// Whether the server shows this holder's session holding the write lock now.
    public func holdsTheLock() -> Bool {
        let granted = try? database.sql("""
            SELECT count(*) FROM pg_locks JOIN pg_stat_activity USING (pid)
            WHERE locktype = 'advisory' AND granted AND objid::bigint = \(Self.writeLock) AND application_name = '\(name)'
            """)
        return granted == "1"
    }

    /// Waits until the holder holds the lock; `false` if its psql ended first (an error) or `timeout` passed.
    public func waitUntilHeld(timeout: Duration = .seconds(60)) async -> Bool {
        _ = await eventually(timeout: timeout, every: psqlPolling) {
            outcome.hasEnded || holdsTheLock()
        }
        return !outcome.hasEnded && holdsTheLock()
    }

    /// Lets the lock go, and waits until the holder's session has ended (its transaction with it).
    public func release() async throws {
        try database.sql("INSERT INTO write_lock_let_go VALUES ('\(name)')")
        _ = await eventually(timeout: .seconds(60), every: .milliseconds(10)) { outcome.hasEnded }
        if let result = outcome.value.withLock({ $0 }) { _ = try result.get() }
    }

    private final class Outcome: Sendable {
        let value = Mutex<Result<String, any Error>?>(nil)
        var hasEnded: Bool { value.withLock { $0 != nil } }
    }
}
#endif
