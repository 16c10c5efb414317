import Foundation
import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// The core's storages against the conformance suite that third parties run too. SQLite runs it in
/// StatehouseSQLiteTests, the encrypted storage in StatehouseSecureTests, each with a crash writer of its own
/// (StatehouseCrashWriter depends on the core only).
@Suite("Storage conformance", .serialized)
struct StorageConformanceTests {
    /// Saves an increasing counter to a `FileStorage` until killed; its arguments are DIRECTORY KEY PARENT_PID.
    static let fileCrashWriter = StorageConformance.CrashWriter(
        executable: helperExecutable(named: "StatehouseCrashWriter")
    ) { place, key, parent in
        [place.directory.path, key, String(parent)]
    }

    @Test(arguments: StorageConformance.checks)
    func memoryStorage(_ check: StorageConformance.Check) async throws {
        // Instances of a memory storage share nothing: every instance the check asks for is this one.
        let storage = MemoryStorage()
        try await check.run { _ in storage }
    }

    @Test(arguments: StorageConformance.checks + [.crashAtomicity(writer: fileCrashWriter)])
    func fileStorage(_ check: StorageConformance.Check) async throws {
        try await check.run(capabilities: [.changeDetection, .keepsDataInPlaceDirectory]) { place in
            FileStorage(directory: place.directory)
        }
    }

    @Test(arguments: StorageConformance.checks)
    func userDefaultsStorage(_ check: StorageConformance.Check) async throws {
        // The suite lives in ~/.config, not in the check's place: the directory only names it, and removes it after.
        let suite = TemporaryDirectory()
        try await check.run { _ in StorageKind.userDefaults.make(in: suite) }
    }
}
