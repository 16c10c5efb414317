import Foundation
import Statehouse
import Synchronization

/// A ``RemoteStorage``'s entries, in memory and in its cache folder: each change is written to disk before it is
/// made visible, so a local write that `save` accepted survives a crash and is pushed by the next run.
final class RemoteCache: Sendable {
    private let files: FileStorage
    /// The entries read so far. Changes are written under the lock, so the disk sees them in the order they were made.
    private let entries = Mutex<[String: RemoteEntry]>([:])

    init(folder: URL) {
        files = FileStorage(directory: folder)
    }

    func entry(_ key: String) throws -> RemoteEntry {
        try entries.withLock { entries in try Self.entry(key, in: &entries, files: files) }
    }

    /// Changes `key`'s entry and writes it.
    ///
    /// - Returns: What `change` returned, and whether the app's value changed (the watchers are told then).
    @discardableResult
    func change<Result>(
        _ key: String, _ change: (inout RemoteEntry) throws -> Result
    ) throws -> (result: Result, entry: RemoteEntry, visibleChanged: Bool) {
        try entries.withLock { entries in
            var entry = try Self.entry(key, in: &entries, files: files)
            let before = entry
            let result = try change(&entry)
            guard entry != before else { return (result, entry, false) }
            do {
                try files.save(try JSONEncoder().encode(entry), key: key)
            } catch let error as StorageError {
                throw error
            } catch {
                throw StorageError(.unencodable, key: key, operation: .save, message: "The cache entry cannot be encoded.")
            }
            entries[key] = entry
            return (result, entry, entry.visible != before.visible)
        }
    }

    /// The keys read so far that hold a write the server does not.
    var pendingKeys: [String] {
        entries.withLock { entries in entries.filter { $0.value.pending != nil }.map(\.key).sorted() }
    }

    /// How many of them there are; counted without making the list, on every write.
    var pendingCount: Int {
        entries.withLock { entries in entries.values.count { $0.pending != nil } }
    }

    private static func entry(_ key: String, in entries: inout [String: RemoteEntry], files: FileStorage) throws -> RemoteEntry {
        if let entry = entries[key] { return entry }
        var entry = RemoteEntry()
        if let data = try files.load(key: key) {
            do {
                entry = try JSONDecoder().decode(RemoteEntry.self, from: data)
            } catch {
                throw StorageError(
                    .undecodable, key: key, operation: .load,
                    message: "The remote storage's cache entry cannot be read (\(type(of: error))); remove the file to start again from the server."
                )
            }
        }
        entries[key] = entry
        return entry
    }
}
