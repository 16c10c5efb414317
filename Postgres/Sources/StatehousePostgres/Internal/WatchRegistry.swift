/// Who watches which key, and the last version of each that watchers were told about: the decisions of
/// ``ChangeListener``, apart from its connection, tasks and lock.
///
/// Keys are their digests, as the notifications name them. A key's known version only grows, so a change reported
/// twice (by its notification and by the catch-up after a reconnection) reaches its watchers once. Version 0 stands
/// for "no row".
struct WatchRegistry {
    typealias Callback = @Sendable () -> Void

    /// A change announced by a notification.
    enum Announced: Equatable {
        /// A write of the key, with the version it gave the row.
        case version(Int64)
        /// The row was deleted (by hand: the storage keeps a row for a removed key).
        case deleted
    }

    private var watchers: [String: [UInt64: Callback]] = [:]
    private var known: [String: Int64] = [:]
    private var lastID: UInt64 = 0

    var isEmpty: Bool { watchers.isEmpty }

    /// Every watched key.
    var keys: [String] { Array(watchers.keys) }

    /// Adds a watcher of `key`; returns its identifier, for ``remove(_:of:)``.
    mutating func add(_ callback: @escaping Callback, of key: String) -> UInt64 {
        lastID += 1
        watchers[key, default: [:]][lastID] = callback
        return lastID
    }

    /// Removes watcher `id` of `key`; forgets the key's version when it was the last.
    mutating func remove(_ id: UInt64, of key: String) {
        watchers[key]?[id] = nil
        if watchers[key]?.isEmpty == true {
            watchers[key] = nil
            known[key] = nil
        }
    }

    /// A notification arrived; returns whom to call.
    mutating func notified(_ change: Announced, of key: String) -> [Callback] {
        switch change {
        case .version(let version): learned(version, of: key)
        case .deleted: learned(0, of: key)
        }
    }

    /// The versions read for `keys` after (re)listening, or when a key started being watched (`0` or missing: no
    /// row); returns whom to call. A key's first version always calls its watchers: a change made between the
    /// watcher's own read and the moment the listener was ready is then not missed.
    mutating func caughtUp(_ versions: [String: Int64], for keys: [String]) -> [Callback] {
        keys.flatMap { key in learned(versions[key] ?? 0, of: key) }
    }

    private mutating func learned(_ version: Int64, of key: String) -> [Callback] {
        guard let callbacks = watchers[key] else { return [] }
        if let current = known[key], version == 0 ? current == 0 : version <= current { return [] }
        known[key] = version
        return Array(callbacks.values)
    }
}
