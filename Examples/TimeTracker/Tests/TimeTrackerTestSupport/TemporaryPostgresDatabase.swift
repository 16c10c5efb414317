#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import PostgresTestCluster
import TimeTrackerCore

/// A database of its own on the test process's private PostgreSQL cluster, dropped afterwards.
///
/// One cluster serves every test of the process (started by the first test that needs it): `initdb` and a server
/// start take seconds, a database a fraction of one. The cluster's watchdog stops it and removes its directory
/// when the test process ends, however it ends; it never touches a system cluster.
public final class TemporaryPostgresDatabase: TestDatabase {
    public let name = "timetrack_" + UUID().uuidString.prefix(8).lowercased()
    public let cluster: PostgresTestCluster

    /// Whether PostgreSQL's programs are installed.
    public static var isInstalled: Bool { PostgresTestCluster.isInstalled }

    private static let shared = Result { () throws(StartFailure) in
        do {
            return try PostgresTestCluster.start()
        } catch {
            throw StartFailure(description: "the private PostgreSQL cluster did not start: \(error)")
        }
    }

    private struct StartFailure: Error, CustomStringConvertible {
        let description: String
    }

    public init() throws {
        cluster = try Self.shared.get()
        try cluster.sql("CREATE DATABASE \(name)")
    }

    deinit {
        _ = try? cluster.sql("DROP DATABASE \(name) WITH (FORCE)")
    }

    /// The server's loopback port.
    public var port: Int { cluster.port }

    /// The URL of the database, with the test cluster's user (trusted on loopback, so no password).
    public var url: String { "postgres://\(PostgresTestCluster.user)@127.0.0.1:\(cluster.port)/\(name)?sslmode=disable" }

    public var commandLineArguments: [String] { ["--database", url] }

    public func tracker(clock: TestClock, lockTimeout: Duration, origin: String) async throws -> TimeTracker {
        try await TimeTracker.open(postgres: url, lockTimeout: lockTimeout, now: { clock.now }, origin: origin)
    }

    public func count(_ table: String) throws -> Int {
        Int(try cluster.sql("SELECT count(*) FROM \(table)", database: name)) ?? -1
    }

    /// Runs `sql` in the database with `psql`; returns what it printed.
    @discardableResult
    public func sql(_ sql: String) throws -> String {
        try cluster.sql(sql, database: name)
    }
}
#endif
