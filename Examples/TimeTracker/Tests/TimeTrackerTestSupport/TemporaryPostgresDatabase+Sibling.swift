#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import PostgresTestCluster

extension TemporaryPostgresDatabase {
    /// Runs `sql` with `psql` in another database of the same cluster (one the test made beside this one).
    @discardableResult
    public func sql(_ sql: String, inDatabase other: String) throws -> String {
        try cluster.sql(sql, database: other)
    }

    /// The URL of another database of the same cluster.
    public func url(ofDatabase other: String) -> String {
        url.replacingOccurrences(of: "/\(name)?", with: "/\(other)?")
    }
}
#endif
