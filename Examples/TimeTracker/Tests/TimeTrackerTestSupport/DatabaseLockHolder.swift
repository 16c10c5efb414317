import GRDB

/// Another program holding the database's write lock (`BEGIN IMMEDIATE`), as an sqlite3 shell or a backup would,
/// until `release()`.
public final class DatabaseLockHolder: Sendable {
    private let connection: DatabaseQueue

    public init(path: String) async throws {
        var configuration = Configuration()
        configuration.allowsUnsafeTransactions = true  // the point: a transaction left open across accesses
        connection = try DatabaseQueue(path: path, configuration: configuration)
        try await connection.writeWithoutTransaction { try $0.execute(sql: "BEGIN IMMEDIATE") }
    }

    public func release() async throws {
        try await connection.writeWithoutTransaction { try $0.execute(sql: "ROLLBACK") }
    }
}
