import Foundation
import Logging
import PostgresNIO
import PostgresTestCluster
import Statehouse
import StatehousePostgres
import StatehouseTestSupport
import Testing

/// A starting store and the snapshots other stores take meanwhile: a snapshot may only stand for actions of others,
/// never for one of the starting store's own, whose effects and waiters only that store can serve.
@Suite(.serialized, .enabled(if: PostgresTestCluster.isInstalled), .postgresCluster)
struct ReplicatedSnapshotTests {
    @Test func aSnapshotTakenWhileAStoreStartsNeverCoversThatStoresOwnAction() async throws {
        try await withClient { client in
            let log = uniqueTable()
            let other = try makeReplica(client, log: log)
            let effects = Recorder<Int>()
            let starting = try makeReplica(client, log: log, effects: effects)
            let logger = Logger(label: "test")
            try await whileRunning([other]) {
                try await other.send(.increment(tag: 1))
                try await client.withConnection { admin in
                    // The starting store's first read, the newest snapshot, waits behind this lock.
                    try await admin.query("BEGIN", logger: logger)
                    try await admin.query("LOCK TABLE \(unescaped: log)_snapshots IN ACCESS EXCLUSIVE MODE", logger: logger)
                    try await whileRunning([starting]) {
                        let sent = Recorder<Int64>()
                        Task.detached { if let sequence = try? await starting.send(.ping) { sent.append(sequence) } }
                        #expect(await eventually(every: psqlPolling) {
                            (try? cluster.sql("""
                                SELECT count(*) > 0 FROM pg_stat_activity
                                WHERE wait_event_type = 'Lock' AND query LIKE '%\(log)_snapshots%'
                                """)) == "t"
                        })
                        // A store that appends before it has read the snapshot does it now; one that waits for the
                        // snapshot appends nothing, and this finds no append in the time given.
                        _ = await eventually(timeout: .seconds(5), every: psqlPolling) {
                            (try? cluster.sql("SELECT count(*) FROM \(log)")) == "2"
                        }
                        // Another store appends, applies, and takes a snapshot of the newest state.
                        try await other.send(.increment(tag: 2))
                        let head = other.appliedSequence
                        let state = try JSONEncoder().encode(other.state)
                        try await admin.query(
                            "INSERT INTO \(unescaped: log)_snapshots (sequence, state) VALUES (\(head), \(state))",
                            logger: logger
                        )
                        try await admin.query("COMMIT", logger: logger)
                        #expect(await eventually { sent.count == 1 }, "send(.ping) never returned")
                        // The ping's effect ran here, and its pong reached both stores.
                        #expect(await eventually { starting.state.pongs == 1 && other.state.pongs == 1 })
                        #expect(effects.count == 1)
                    }
                }
                #expect(await eventually { other.appliedSequence == starting.appliedSequence })
                #expect(other.state == starting.state)
            }
        }
    }
}
