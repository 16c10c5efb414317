#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// Every commit to the tracker's tables, whoever made it, reaches the tracker by `NOTIFY`; a listener whose connection
/// is terminated, or dies without a word, listens again and catches up with what was written meanwhile.
@Suite(
    "The PostgreSQL listener", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct PostgresListenerTests {
    /// A row inserted by another program (psql) reaches the tracker's state.
    @Test func aChangeMadeWithoutTimetrackReachesTheTracker() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await database.tracker()
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES ('From psql', 'from psql', 0)")
        #expect(await eventually { tracker.store.state.projects.map(\.name) == ["From psql"] })
    }

    /// Every connection of the tracker terminated: the listener comes back and catches up with a change made meanwhile,
    /// a later change by another tracker arrives too, and the tracker's own writes go through new connections.
    @Test func theListenerComesBackAfterItsConnectionIsTerminatedAndCatchesUp() async throws {
        let database = try TemporaryPostgresDatabase()
        let viewer = try await database.tracker()
        // Every client connection of the database but psql's own: the listener's, and the pooled ones (as the
        // cluster's own terminateConnections does, only client backends: not a server process of its own).
        let terminated = try database.sql("""
            SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """)
        #expect(Int(terminated) ?? 0 >= 1)
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES ('While away', 'while away', 0)")
        #expect(await eventually { viewer.store.state.projects.map(\.name) == ["While away"] })
        let writer = try await database.tracker()
        try await writer.perform(.addProject(name: "After"))
        #expect(await eventually { viewer.store.state.projects.map(\.name) == ["After", "While away"] })
        // The viewer's own pooled connections were terminated too: its writes go through new ones.
        try await viewer.perform(.addProject(name: "Again"))
    }

    /// The tracker's connections die silently (a NAT or a firewall between it and the server forgets them: no
    /// reset, no close), while new connections work: the listener must notice, listen again and catch up, or the
    /// pages of that server never update again.
    @Test func aListenerWhoseConnectionSilentlyDiesComesBackAndCatchesUp() async throws {
        let database = try TemporaryPostgresDatabase()
        let proxy = try PostgresProxy(to: database.port)
        defer { proxy.close() }
        // Its idle pooled connections die too, and a read that gets one is given up at the statement timeout: a
        // short one, so that the deadline below measures the listener's coming back, not that timeout.
        let tracker = try await TimeTracker.open(postgres: database.url(through: proxy), statementTimeout: .seconds(5))
        // The listener listens (through the proxy) before its connection dies: the change below reaches it only if
        // it notices and listens again.
        #expect(await eventually(every: psqlPolling) {
            (try? database.sql("""
                SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN%'
                """)) == "1"
        })
        proxy.blackHoleOpenConnections()
        try database.sql("INSERT INTO project (name, nameKey, created) VALUES ('While away', 'while away', 0)")
        #expect(await eventually(timeout: .seconds(120)) { tracker.store.state.projects.map(\.name) == ["While away"] })
    }
}
#endif
