import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// A key's version only grows, in the order its writes commit, whoever holds the row when a write comes in: the
/// listener skips an announced version at or below one it knows, so a write that committed a lower version after a
/// higher one would never reach any watcher.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct PostgresVersionOrderTests {
    enum Write: String, CaseIterable, Sendable {
        case save, remove
    }

    /// Another machine's transaction holds the row while a write of this storage comes in, then commits: the write
    /// waits for the lock, commits after it, and must come out with the higher version, and be announced.
    @Test(arguments: Write.allCases)
    func aWriteThatWaitedForTheRowLockCommitsAHigherVersionAndIsAnnounced(write: Write) async throws {
        try await withStorage { storage in
            let table = storage.table
            try storage.save(Data("first".utf8), key: "k")
            let calls = Recorder<Void>()
            let watch = try storage.watchChanges(of: "k") { calls.append(()) }
            defer { watch.cancel() }
            #expect(await eventually { calls.count == 1 })
            let logger = Logger(label: "test")
            try await withClient { other in
                try await other.withConnection { connection in
                    try await connection.query("BEGIN", logger: logger)
                    try await connection.query(
                        "SELECT 1 FROM \(unescaped: table) WHERE key = 'k' FOR UPDATE", logger: logger
                    )
                    let waiting = Task.detached {
                        try await onThread {
                            switch write {
                            case .save: try storage.save(Data("mine".utf8), key: "k")
                            case .remove: try storage.remove(key: "k")
                            }
                        }
                    }
                    // The write has reached the row and waits for its lock.
                    #expect(await eventually(every: psqlPolling) {
                        (try? cluster.sql("""
                            SELECT count(*) FROM pg_stat_activity
                            WHERE wait_event_type = 'Lock' AND query LIKE '%\(table)%'
                            """)) == "1"
                    })
                    let theirs = try await connection.query(
                        """
                        UPDATE \(unescaped: table) SET value = '\\x6f74686572', version = nextval('\(unescaped: table)_version')
                        WHERE key = 'k' RETURNING version
                        """,
                        logger: logger
                    ).collect()[0].decode(Int64.self)
                    try await connection.query("COMMIT", logger: logger)
                    try await waiting.value
                    let ours = try #require(Int64(try cluster.sql("SELECT version FROM \(table) WHERE key = 'k'")))
                    #expect(ours > theirs, "the write that committed last has the lower version")
                }
            }
            #expect(try storage.load(key: "k") == (write == .save ? Data("mine".utf8) : nil))
            // The other transaction's commit, then ours.
            #expect(await eventually { calls.count == 3 }, "the last write was never announced to the watcher")
        }
    }
}
