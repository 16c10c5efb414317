import Foundation
import Statehouse

extension StorageConformance.Check {
    /// A storage whose directory cannot be created fails to save with `StorageError`s that name the key and the
    /// operation, say what happened, and never contain the value; loading and removing may find nothing instead.
    ///
    /// Runs only for storages that declare ``StorageConformance/Capabilities/keepsDataInPlaceDirectory``: the place
    /// it gives lies under a regular file, which no user, root included, can create a directory in. Making the
    /// storage there may itself throw a `StorageError`.
    public static let storageErrors = Self(
        id: "storageErrors",
        name: "storage errors: where nothing can be written, each failure is a StorageError naming the key, not the value"
    ) { subject in
        try skipUnlessKeptInPlace(subject)
        let examiner = ErrorExaminer(
            subject: subject, key: "conformance.unwritable", situation: "in a directory that cannot be created"
        )
        guard let storage = examiner.makeStorage(on: try subject.unwritablePlace()) else { return }
        examiner.tryEveryOperation(on: storage, mustFail: [.save, .transact])
    }

    /// A storage whose files were overwritten with garbage (a damaged disk, another program) loads whatever it
    /// loads, or fails with `StorageError`s that name the key and the operation; no other error, and none holding the
    /// value. Both the instance that had the files open and a new one are tried.
    ///
    /// Runs only for storages that declare ``StorageConformance/Capabilities/keepsDataInPlaceDirectory``: it damages
    /// every file under ``StorageConformance/Place/directory``.
    public static let damagedFiles = Self(
        id: "damagedFiles",
        name: "damaged files: garbage in the storage's files gives data or StorageErrors naming the key, nothing else"
    ) { subject in
        try skipUnlessKeptInPlace(subject)
        let examiner = ErrorExaminer(subject: subject, key: "conformance.damaged", situation: "on damaged files")
        let open = try subject.instance()
        try open.save(Data("intact".utf8), examiner.key)
        try open.save(Data("neighbour".utf8), examiner.key + ".neighbour")
        let damaged = overwriteFiles(under: subject.place.directory)
        try subject.require(
            damaged > 0, "Nothing under the place's directory to damage: does the storage keep its data there?")
        examiner.tryEveryOperation(on: open.storage, mustFail: [])
        // Again: the first instance may have repaired or replaced the files.
        _ = overwriteFiles(under: subject.place.directory)
        if let reopened = examiner.makeStorage(on: subject.place) {
            examiner.tryEveryOperation(on: reopened, mustFail: [])
        }
    }

    private static func skipUnlessKeptInPlace(_ subject: ConformanceSubject) throws {
        guard subject.capabilities.contains(.keepsDataInPlaceDirectory) else {
            try subject.skip("Runs for storages declared .keepsDataInPlaceDirectory.")
        }
    }

    /// Overwrites every non-empty file under `directory`, in place and at its length, with garbage; returns how many.
    private static func overwriteFiles(under directory: URL) -> Int {
        let files =
            FileManager.default.enumerator(at: directory, includingPropertiesForKeys: [.isRegularFileKey])?
            .compactMap { $0 as? URL }
            .filter { (try? $0.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true } ?? []
        var damaged = 0
        for file in files {
            guard let handle = try? FileHandle(forUpdating: file), let length = try? handle.seekToEnd(), length > 0
            else {
                continue
            }
            try? handle.seek(toOffset: 0)
            try? handle.write(contentsOf: Data(repeating: 0xA5, count: Int(length)))
            try? handle.close()
            damaged += 1
        }
        return damaged
    }
}
