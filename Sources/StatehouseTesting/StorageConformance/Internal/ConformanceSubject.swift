import Foundation
import Statehouse
import Testing

/// Ends a check after a failure it has recorded: what would follow could only repeat it.
struct CheckStopped: Error {}

/// What a check works with: the caller's way to make the storage, the place its instances share, and where to
/// report.
struct ConformanceSubject: Sendable {
    /// The check's temporary directory: the place's directory is two levels below it, so that a key escaping the
    /// place (`../x`, `../../etc/passwd`) lands where ``strayEntries()`` sees it.
    let root: URL
    let place: StorageConformance.Place
    let capabilities: StorageConformance.Capabilities
    let sourceLocation: SourceLocation
    /// The caller's closure; ``makeInstance(on:)`` records what it throws.
    let makeStorage: @Sendable (StorageConformance.Place) throws -> any StateStorage

    private static let sandbox = "sandbox"
    private static let storage = "storage"
    private static let notADirectory = "not-a-directory"

    init(
        root: URL,
        checkID: String,
        capabilities: StorageConformance.Capabilities,
        makeStorage: @escaping @Sendable (StorageConformance.Place) throws -> any StateStorage,
        sourceLocation: SourceLocation
    ) {
        self.root = root
        let unique = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        self.place = StorageConformance.Place(
            directory: root.appendingPathComponent(Self.sandbox).appendingPathComponent(Self.storage),
            name: "statehouse.conformance.\(checkID).\(unique)"
        )
        self.capabilities = capabilities
        self.makeStorage = makeStorage
        self.sourceLocation = sourceLocation
    }

    /// A new instance of the storage on the check's place: to the storage, as good as another process.
    func instance() throws -> StorageProbe {
        StorageProbe(storage: try makeInstance(on: place), sourceLocation: sourceLocation)
    }

    /// What the caller's closure makes on `place`; what it throws is recorded, and stops the check.
    func makeInstance(on place: StorageConformance.Place) throws -> any StateStorage {
        do {
            return try makeStorage(place)
        } catch {
            fail("Making the storage on \(place) threw \(describe(error)).")
            throw CheckStopped()
        }
    }

    /// A place whose directory cannot be created, by any user (root included): its parent is a regular file.
    func unwritablePlace() throws -> StorageConformance.Place {
        let file = root.appendingPathComponent(Self.notADirectory)
        try Data("a file where a directory should be".utf8).write(to: file)
        return StorageConformance.Place(
            directory: file.appendingPathComponent(Self.storage), name: place.name + ".unwritable"
        )
    }

    /// What appeared outside the place's directory: files a key escaped into. Entries beside the directory that
    /// start with its name (a database's `storage-wal`) belong to the storage.
    func strayEntries() -> [String] {
        let sandbox = root.appendingPathComponent(Self.sandbox)
        let besideRoot = ((try? FileManager.default.contentsOfDirectory(atPath: root.path)) ?? [])
            .filter { $0 != Self.sandbox && $0 != Self.notADirectory }
            .map { root.appendingPathComponent($0).path }
        let besidePlace = ((try? FileManager.default.contentsOfDirectory(atPath: sandbox.path)) ?? [])
            .filter { !$0.hasPrefix(Self.storage) }
            .map { sandbox.appendingPathComponent($0).path }
        return (besideRoot + besidePlace).sorted()
    }

    /// Records a failure at the caller's source location.
    func fail(_ message: String) {
        Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    }

    /// Records `message`, with what loaded, unless `probe` loads `expected` for `key`.
    func expect(_ probe: StorageProbe, loads expected: Data?, for key: String, _ message: String) throws {
        let loaded = try probe.load(key)
        if loaded != expected {
            fail("\(message) (\(describe(key: key)) loaded \(describe(loaded)), not \(describe(expected)).)")
        }
    }

    /// Records `message` and stops the check unless `condition` holds: for what the rest of the check needs.
    func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        guard condition else {
            fail(message())
            throw CheckStopped()
        }
    }

    /// Ends the check as skipped: it does not apply to this storage.
    func skip(_ reason: String) throws -> Never {
        #if compiler(>=6.3)
        try Test.cancel(Comment(rawValue: reason), sourceLocation: sourceLocation)
        #else
        throw CheckStopped()
        #endif
    }

    /// `probe`'s storage as a `ChangeDetectingStorage`; skips the check if it is none and was not declared one.
    func changeDetecting(_ probe: StorageProbe) throws -> any ChangeDetectingStorage {
        try capability(probe, as: (any ChangeDetectingStorage).self, declared: .changeDetection)
    }

    /// `probe`'s storage as a `TransactionalStorage`; skips the check if it is none and was not declared one.
    func transactional(_ probe: StorageProbe) throws -> any TransactionalStorage {
        try capability(probe, as: (any TransactionalStorage).self, declared: .transactions)
    }

    private func capability<Storage>(
        _ probe: StorageProbe,
        as type: Storage.Type,
        declared: StorageConformance.Capabilities
    ) throws -> Storage {
        if let storage = probe.storage as? Storage { return storage }
        let protocolName = String(describing: type).replacingOccurrences(of: "any ", with: "")
        let storageName = String(describing: Swift.type(of: probe.storage))
        guard capabilities.contains(declared) else {
            try skip("\(storageName) is not a \(protocolName).")
        }
        fail("\(storageName) was declared a \(protocolName), but does not conform to it.")
        throw CheckStopped()
    }
}
