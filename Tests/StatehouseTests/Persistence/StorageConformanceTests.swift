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
        // Known: on Linux its fingerprint is a hash of the stored bytes (a deliberate choice of the outside-change
        // work, issue 14: another process saving the same value is no change to follow), while
        // ChangeDetectingStorage and this check ask for a new fingerprint at every save. Only that expectation is
        // known to fail; which side should give is left to issue 14.
        try await withKnownIssue {
            try await check.run { _ in StorageKind.userDefaults.make(in: suite) }
        } when: {
            // Where the storage detects no changes (Apple platforms), the check does not run.
            check.id == "fingerprints" && StorageKind.userDefaults.make(in: suite) is any ChangeDetectingStorage
        } matching: { issue in
            issue.comments.contains { $0.rawValue.hasPrefix("Saving the same bytes again left the fingerprint unchanged") }
        }
    }
}
