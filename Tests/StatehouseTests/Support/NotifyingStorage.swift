import Foundation
@testable import Statehouse

/// A ``ChangeNotifyingStorage`` around another storage, whose notifications the test sends (``notify()``) as the
/// kernel would, or that refuses to watch, as a storage out of inotify watches does. While ``failsReads`` is set,
/// reads throw, as on a disk that went away; while ``failsSavingAside`` is set, bytes cannot be kept aside. With
/// ``holdsNextFingerprint`` set, the next fingerprint read waits: a check held on the writer, as on a slow disk.
final class NotifyingStorage: ChangeNotifyingStorage {
    let base: any ChangeDetectingStorage
    let failsReads = Locked(false)
    /// Saves under the keys bytes are kept aside under (`<key>.undecodable.…`) throw, as on a full disk or quota.
    let failsSavingAside = Locked(false)
    /// The keys bytes were kept aside under, in order.
    let keptAside = Locked<[String]>([])
    /// The next ``fingerprint(key:)`` signals `entered`, then waits for `proceed` (two minutes at most).
    let holdsNextFingerprint = Locked<(entered: DispatchSemaphore, proceed: DispatchSemaphore)?>(nil)
    private let refusal: StorageError?
    private let watchers = Locked<(last: Int, callbacks: [Int: @Sendable () -> Void])>((0, [:]))

    /// - Parameter refusal: What `watchChanges` throws; `nil` to watch.
    init(_ base: any ChangeDetectingStorage, refusing refusal: StorageError? = nil) {
        self.base = base
        self.refusal = refusal
    }

    /// Tells every watcher that something may have changed.
    func notify() {
        for callback in watchers.withLock({ Array($0.callbacks.values) }) { callback() }
    }

    /// How many watch now.
    var watcherCount: Int {
        watchers.withLock { $0.callbacks.count }
    }

    func watchChanges(of key: String, _ onChange: @escaping @Sendable () -> Void) throws(StorageError) -> StorageWatch {
        if let refusal { throw refusal }
        let id = watchers.withLock { watchers in
            watchers.last += 1
            watchers.callbacks[watchers.last] = onChange
            return watchers.last
        }
        return StorageWatch { [self] in _ = watchers.withLock { $0.callbacks.removeValue(forKey: id) } }
    }

    func load(key: String) throws -> Data? {
        try failIfAsked()
        return try base.load(key: key)
    }
    func save(_ data: Data, key: String) throws {
        guard key.contains(".undecodable.") else { return try base.save(data, key: key) }
        if failsSavingAside.withLock({ $0 }) { throw CocoaError(.fileWriteOutOfSpace) }
        try base.save(data, key: key)
        keptAside.withLock { $0.append(key) }
    }
    func remove(key: String) throws { try base.remove(key: key) }
    func fingerprint(key: String) throws -> StorageFingerprint {
        if let hold = holdsNextFingerprint.withLock({ $0.take() }) {
            hold.entered.signal()
            // A deadline, so that a test that never signals cannot hold this writer, and every flush waiting for it,
            // for good.
            _ = hold.proceed.wait(timeout: .now() + .seconds(120))
        }
        try failIfAsked()
        return try base.fingerprint(key: key)
    }
    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try base.saveReturningFingerprint(data, key: key)
    }

    private func failIfAsked() throws {
        if failsReads.withLock({ $0 }) { throw CocoaError(.fileReadNoPermission) }
    }
}
