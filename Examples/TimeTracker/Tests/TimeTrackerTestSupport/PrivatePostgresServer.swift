#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import PostgresTestCluster

/// A PostgreSQL server for one test alone, for what would disturb every other test on the shared cluster of
/// ``TemporaryPostgresDatabase`` (a restart); stopped and removed when released.
public final class PrivatePostgresServer: Sendable {
    private let cluster: PostgresTestCluster

    public init() throws {
        cluster = try PostgresTestCluster.start()
    }

    deinit {
        cluster.stop()
    }

    /// Its `postgres` database, as the test cluster's user (trusted on loopback: no password).
    public var url: String {
        "postgres://\(PostgresTestCluster.user)@127.0.0.1:\(cluster.port)/\(PostgresTestCluster.database)?sslmode=disable"
    }

    /// `pg_ctl restart`: every connection is dropped, and the server is back when this returns.
    public func restart() throws {
        try cluster.restart()
    }

    /// Runs `sql` with `psql` in the `postgres` database; returns what it printed.
    @discardableResult
    public func sql(_ sql: String) throws -> String {
        try cluster.sql(sql)
    }
}
#endif
