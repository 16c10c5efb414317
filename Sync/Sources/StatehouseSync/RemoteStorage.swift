import Foundation
import Statehouse
import StatehouseSyncWire
import Synchronization

/// A storage whose keys are containers a `SyncServer` hosts (`host(container:of:)`), with a local cache: containers
/// on it work offline and follow the server's value.
///
/// ```swift
/// let remote = try RemoteStorage(server: url, token: token, cache: cacheFolder)
/// let settings = StateContainer(Settings(), key: "settings", storage: remote)
/// settings.modify(Settings(theme: "dark"))              // works offline; pushed when the server can be reached
/// for await status in remote.syncStatus { … }             // synced, pending(n), offline(since:), failed(…)
/// ```
///
/// What the app reads is the cache: its own write until the server holds it, else the server's value as last
/// heard. `save` (a container's `modify`, or its coalesced writes) writes the cache, durably, and returns; the write
/// is pushed in the background, replacing only the version it was made on (`If-Match`). When the server's value has
/// moved on, the ``ConflictPolicy`` decides. A container's `update` is a transaction on the server's value while the
/// server can be reached (its body runs on the newest value, and again when another write came first), and a local
/// write otherwise.
///
/// Each key read is followed (the server's feed, resumed by version), so another app's write reaches the
/// containers' listeners in milliseconds. A write left in the cache by an earlier run is pushed once a container
/// reads its key again. Keys are 1 to 64 characters of `A-Z a-z 0-9 . _ -`, as the server's routes take them.
public final class RemoteStorage: TransactionalStorage, ChangeNotifyingStorage, Sendable {
    let connection: ContainerConnection
    let policy: ConflictPolicy
    let cache: RemoteCache
    /// What the loops learned; its `pending` stays 0: the cache counts the writes (see `currentStatus`).
    let health = Mutex(SyncHealth(pending: 0))
    let backoff = Mutex(Backoff())
    let statusContainer: StateContainer<SyncStatus>
    private let publishing: StatusPublishing
    let followers = Mutex<Followers>(Followers())
    /// Held while a key is written to the server, so that the pushes and `update`'s transactions go one at a time.
    let writing = NSLock()
    let pushing = DispatchQueue(label: "statehouse.remote.push")
    let pushScheduled = Mutex(false)
    /// Held for the storage's life: two storages on one cache folder would each take the other's writes for their own.
    private let cacheFolderLock: OutboxLock

    /// The feeds followed, and whom to tell when a key's value changes.
    struct Followers {
        var feeds: [String: Task<Void, Never>] = [:]
        var watchers: [String: [UInt64: @Sendable () -> Void]] = [:]
        var nextWatcher: UInt64 = 0
    }

    /// - Parameters:
    ///   - server: The server's base URL (its routes are under it: `containers/{key}` …).
    ///   - token: What the server knows this app by (`Authorization: Bearer …`).
    ///   - cache: A folder of this storage's own, created if missing: the values last heard and the writes not yet
    ///     pushed, so that the app starts offline where it stopped.
    ///   - conflicts: What a local write that the server's value has moved on from becomes.
    /// - Throws: ``SyncError/outboxInUse(path:)`` while another remote storage uses `cache`, or
    ///   ``SyncError/outboxUnusable(path:reason:)``.
    public init(server: URL, token: String, cache: URL, conflicts: ConflictPolicy = .rerunUpdate) throws(SyncError) {
        cacheFolderLock = try OutboxLock(folder: cache, name: "remote")
        connection = ContainerConnection(http: SyncHTTP(server: server, token: token, timeout: 10))
        policy = conflicts
        self.cache = RemoteCache(folder: cache)
        statusContainer = StateContainer(SyncStatus.synced, key: "statehouse.remote.status.\(UUID().uuidString)")
        publishing = StatusPublishing(to: statusContainer)
    }

    deinit {
        for feed in followers.withLock({ $0.feeds.values }) { feed.cancel() }
    }

    /// How the storage stands with the server now: ``SyncStatus/pending(_:)`` counts the keys with a write the
    /// server does not hold yet.
    public var status: SyncStatus {
        currentStatus
    }

    /// The status now, then each change.
    public var syncStatus: AsyncStream<SyncStatus> {
        statusContainer.values
    }

    /// Pushes now instead of at the next back-off's end.
    public func syncNow() {
        schedulePush()
    }

    // MARK: StateStorage

    public func load(key: String) throws -> Data? {
        try loadWithFingerprint(key: key).data
    }

    public func save(_ data: Data, key: String) throws {
        _ = try saveReturningFingerprint(data, key: key)
    }

    public func remove(key: String) throws {
        try write(nil, key: key)
    }

    // MARK: ChangeDetectingStorage

    public func fingerprint(key: String) throws -> StorageFingerprint {
        try loadWithFingerprint(key: key).fingerprint
    }

    public func loadWithFingerprint(key: String) throws -> (data: Data?, fingerprint: StorageFingerprint) {
        try Self.check(key, .load)
        let entry = try cache.entry(key)
        // The first read of a key finds the write an earlier run left, if any: counted and pushed from now on. Later
        // reads (a container's safety-net poll) leave pushing to the back-off.
        if follow(key), entry.pending != nil {
            updateHealth { _ in }
            schedulePush()
        }
        return (entry.visible, StorageFingerprint.ofContent(entry.visible))
    }

    public func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try write(data, key: key)
    }

    // MARK: TransactionalStorage

    public func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        try Self.check(key, .transact)
        follow(key)
        return try transaction(key, transform)
    }

    /// An update whose write was sent and whose answer was lost: the container does not run it again (it may be
    /// stored), reports it failed, and reads the key again.
    public func outcomeIsUnknown(after error: StorageError) -> Bool {
        error.cause is OutcomeUnknown
    }

    // MARK: ChangeNotifyingStorage

    public func watchChanges(of key: String, _ onChange: @escaping @Sendable () -> Void) throws(StorageError) -> StorageWatch {
        try Self.check(key, .watch)
        let id = followers.withLock { followers in
            defer { followers.nextWatcher += 1 }
            followers.watchers[key, default: [:]][followers.nextWatcher] = onChange
            return followers.nextWatcher
        }
        follow(key)
        return StorageWatch { [weak self] in
            _ = self?.followers.withLock { $0.watchers[key]?.removeValue(forKey: id) }
        }
    }

    // MARK: Helpers

    /// A local write: into the cache now, to the server in the background.
    @discardableResult
    func write(_ data: Data?, key: String) throws -> StorageFingerprint {
        try Self.check(key, data == nil ? .remove : .save)
        // A copy of bytes a container could not decode (`setAside`) stays here: the server hosts no such key.
        if key.contains(".undecodable.") { return try keepLocally(data, key: key) }
        follow(key)
        let entry = try cache.change(key) { $0.record(data) }.entry
        updateHealth { _ in }
        if health.withLock({ $0.offline == nil }) { schedulePush() }
        return StorageFingerprint.ofContent(entry.visible)
    }

    private func keepLocally(_ data: Data?, key: String) throws -> StorageFingerprint {
        let entry = try cache.change(key) { entry in
            entry.server = data
            entry.version = nil
            entry.pending = nil
        }.entry
        return StorageFingerprint.ofContent(entry.visible)
    }

    /// Tells the watchers of `key` that its value may have changed.
    func notify(_ key: String) {
        for watcher in followers.withLock({ $0.watchers[key].map { Array($0.values) } ?? [] }) { watcher() }
    }

    /// Takes in what the sync loops learned, and publishes the status that follows, with the count of pending
    /// writes as the cache holds it then.
    func updateHealth(_ change: (inout SyncHealth) -> Void) {
        health.withLock { change(&$0) }
        publishing.publish { currentStatus }
    }

    /// The status, with the count of pending writes the cache holds now. Not stored in the health: a count read
    /// before its lock and stored there could be older than one another thread stored meanwhile.
    private var currentStatus: SyncStatus {
        let pending = cache.pendingCount
        return health.withLock { $0.status(pending: pending) }
    }

    private static func check(_ key: String, _ operation: StorageError.Operation) throws(StorageError) {
        guard ClientID.isValid(key) || key.contains(".undecodable.") else {
            throw StorageError(
                .invalidConfiguration, key: key, operation: operation,
                message: "A remote container's key is 1 to 64 characters of A-Z a-z 0-9 . _ -, as the server's routes take it."
            )
        }
    }
}

/// Why an update failed with its outcome unknown (see ``RemoteStorage/outcomeIsUnknown(after:)``).
struct OutcomeUnknown: Error {}
