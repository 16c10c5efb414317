import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// Encrypted storage against the conformance suite that third parties run too.
@Suite("Encrypted storage conformance", .serialized)
struct SecureConformanceTests {
    /// The key file of a check's place: beside its directory, so that the damaged-files check (which garbles every
    /// file inside) leaves it alone, and named after it, as the suite allows a storage's own files there.
    static func keyFile(of place: StorageConformance.Place) -> URL {
        place.directory.appendingPathExtension("key")
    }

    /// Saves an increasing counter to an encrypted container on the place until killed; its arguments are
    /// DIRECTORY KEY_FILE KEY PARENT_PID.
    static let crashWriter = StorageConformance.CrashWriter(
        executable: helperExecutable(named: "StatehouseSecureCrashWriter")
    ) { place, key, parent in
        [place.directory.path, keyFile(of: place).path, key, String(parent)]
    }

    @Test(arguments: StorageConformance.checks + [.crashAtomicity(writer: crashWriter)])
    func encryptedStorage(_ check: StorageConformance.Check) async throws {
        // Every instance, and the crash writer, opens the place's one key file (the first creates it). Where the place
        // cannot be created, the key file cannot be either, so the storage-errors check sees that StorageError;
        // EncryptedStorageTests covers each operation in a directory that cannot be created.
        try await check.run(capabilities: [.changeDetection, .keepsDataInPlaceDirectory]) { place in
            EncryptedStorage(directory: place.directory, key: try EncryptionKey.loadOrCreate(at: Self.keyFile(of: place)))
        }
    }
}
