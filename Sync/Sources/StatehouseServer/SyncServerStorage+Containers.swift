import Foundation
import GRDB

extension SyncServerStorage {
    /// The container `key` as stored: ``StoredContainer/never`` before its first write.
    func load(container key: String) throws -> StoredContainer {
        try database.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT value, version FROM syncContainer WHERE key = ?", arguments: [key])
            else { return .never }
            return StoredContainer(version: row["version"], value: row["value"])
        }
    }

    /// Stores `value` (`nil` removes it) under `key` if `condition` holds for what is stored, in one transaction:
    /// the check and the write see the same version, whoever else writes.
    ///
    /// - Returns: What the key holds after: the new version, or the current one when the condition failed.
    func write(container key: String, value: Data?, if condition: WriteCondition) async throws -> (StoredContainer, written: Bool) {
        try await database.write { db in
            let current = try Row.fetchOne(db, sql: "SELECT value, version FROM syncContainer WHERE key = ?", arguments: [key])
                .map { StoredContainer(version: $0["version"], value: $0["value"]) } ?? .never
            guard condition.holds(for: current) else { return (current, false) }
            let next = StoredContainer(version: current.version + 1, value: value)
            try db.execute(
                sql: """
                    INSERT INTO syncContainer (key, value, version) VALUES (?, ?, ?)
                    ON CONFLICT (key) DO UPDATE SET value = excluded.value, version = excluded.version
                    """,
                arguments: [key, next.value, next.version]
            )
            return (next, true)
        }
    }
}
