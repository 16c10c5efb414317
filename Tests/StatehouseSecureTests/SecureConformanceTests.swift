import Foundation
import Statehouse
import StatehouseSecure
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// Encrypted storage against the conformance suite that third parties run too.
@Suite("Encrypted storage conformance", .serialized)
struct SecureConformanceTests {
    /// Where the key files of the checks' places are: outside the places' directory trees, so that where a place
    /// cannot be created (the storage-errors check) the key can, and the check reaches the storage's own operations;
    /// and apart from the files the damaged-files check garbles.
    static let keyFolder = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-secure-conformance")

    /// The key file of a check's place.
    static func keyFile(of place: StorageConformance.Place) -> URL {
        keyFolder.appendingPathComponent("\(place.name).key")
    }

    /// The storage every check's instances and the crash writer use: the first creates the place's key file.
    static func storage(on place: StorageConformance.Place) throws -> EncryptedStorage {
        EncryptedStorage(directory: place.directory, key: try EncryptionKey.loadOrCreate(at: keyFile(of: place)))
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
        defer { Self.removeKeyFiles(of: check) }
        try await check.run(capabilities: [.changeDetection, .keepsDataInPlaceDirectory]) { place in
            try Self.storage(on: place)
        }
    }

    /// With the key file beside the place, the storage-errors check stopped at the key file, which cannot be
    /// created where the place cannot, and never called the storage: a storage failing with other errors passed.
    @Test func theStorageErrorsCheckReachesTheStorageItself() async throws {
        defer { Self.removeKeyFiles(of: .storageErrors) }
        try await withKnownIssue("saves that throw what Foundation throws") {
            try await StorageConformance.Check.storageErrors.run(capabilities: .keepsDataInPlaceDirectory) { place in
                ForeignErrorsOnSave(base: try Self.storage(on: place))
            }
        } matching: { issue in
            issue.comments.contains { $0.rawValue.contains("save(key: \"conformance.unwritable\")") }
        }
    }

    private static func removeKeyFiles(of check: StorageConformance.Check) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: keyFolder.path)) ?? []
        for name in names where name.hasPrefix("statehouse.conformance.\(check.id).") {
            try? FileManager.default.removeItem(at: keyFolder.appendingPathComponent(name))
        }
    }
}

/// Encrypted storage whose saves throw Foundation's error instead of a `StorageError`: one promise broken.
private struct ForeignErrorsOnSave: StateStorage {
    let base: EncryptedStorage

    func load(key: String) throws -> Data? { try base.load(key: key) }
    func remove(key: String) throws { try base.remove(key: key) }

    func save(_ data: Data, key: String) throws {
        do {
            try base.save(data, key: key)
        } catch {
            throw CocoaError(.fileWriteUnknown)
        }
    }
}
