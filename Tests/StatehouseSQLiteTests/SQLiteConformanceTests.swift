import Foundation
import Statehouse
import StatehouseSQLite
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// SQLite storage against the conformance suite that third parties run too.
@Suite("SQLite storage conformance", .serialized)
struct SQLiteConformanceTests {
    /// The database of a check's place.
    static func database(in place: StorageConformance.Place) -> String {
        place.directory.appendingPathComponent("state.sqlite").path
    }

    /// Stores an increasing counter in the place's database, a transaction each, until killed.
    static let crashWriter = StorageConformance.CrashWriter(
        executable: helperExecutable(named: "StatehouseSQLiteWorker")
    ) { place, key, parent in
        [database(in: place), key, "crash", String(parent)]
    }

    @Test(arguments: StorageConformance.checks + [.crashAtomicity(writer: crashWriter)])
    func sqliteStorage(_ check: StorageConformance.Check) async throws {
        try await check.run(capabilities: [.transactions, .keepsDataInPlaceDirectory]) { place in
            try SQLiteStorage(path: Self.database(in: place))
        }
    }
}
