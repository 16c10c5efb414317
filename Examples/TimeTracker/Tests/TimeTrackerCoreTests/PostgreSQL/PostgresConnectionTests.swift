#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// The tracker's connections: closed when it is released, and replaced at once when the server terminated them.
@Suite(
    "The tracker's PostgreSQL connections", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct PostgresConnectionTests {
    /// A tracker that is released closes every connection it opened: a server that opens a tracker per request, or
    /// a test suite, would otherwise exhaust the server's connections.
    @Test func aReleasedTrackerClosesItsConnections() async throws {
        let database = try TemporaryPostgresDatabase()
        let connections = """
            SELECT count(*) FROM pg_stat_activity
            WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
            """
        var tracker: TimeTracker? = try await database.tracker()
        try await tracker?.perform(.addProject(name: "Writing"))
        #expect(try Int(database.sql(connections)) ?? 0 >= 1)
        tracker = nil
        #expect(await eventually { (try? database.sql(connections)) == "0" })
    }

    /// Every connection of the tracker is terminated, and once the server has ended them all, an action runs: the
    /// pool may lease one of the dead connections before it learns of the close, and postgres-nio never answers a
    /// statement written to a closed connection. The action must not wait for the statement timeout and fail: it
    /// runs on another connection.
    @Test func anActionRightAfterEveryConnectionWasTerminatedSucceeds() async throws {
        let database = try TemporaryPostgresDatabase()
        let tracker = try await TimeTracker.open(postgres: database.url, statementTimeout: .seconds(5))
        for round in 0..<20 {
            let ended = try database.sql("""
                WITH killed AS (
                    SELECT pid, pg_terminate_backend(pid) FROM pg_stat_activity
                    WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'
                )
                SELECT coalesce(string_agg(pid::text, ','), '0') FROM killed
                """)
            // Those backends are gone (the listener may have connected again meanwhile: it is not waited for).
            #expect(await eventually(every: psqlPolling) { (try? database.sql("SELECT count(*) FROM pg_stat_activity WHERE pid IN (\(ended))")) == "0" })
            let outcome = await outcome(of: .addProject(name: "p\(round)"), on: tracker)
            #expect((try? outcome.get()) != nil, "round \(round): \(outcome)")
        }
    }
}
#endif
