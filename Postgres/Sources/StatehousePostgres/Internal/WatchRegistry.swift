/// Who watches which key, and the last version of each that watchers were told about: the decisions of
/// ``ChangeListener``, apart from its connection, tasks and lock.
///
/// Keys are their digests, as the notifications name them. A key's known version only grows, so a change reported
/// twice (by its notification and by the catch-up after a reconnection) reaches its watchers once. Version 0 stands
/// for "no row".
///
/// Every watcher gets a first call once its watch is live, whatever the version: a change made between the watcher's
/// own read and that moment may have been announced to the key's other watchers already, so no version would be news
/// to it. A watcher added while the listener listens is live at once; one added while it reconnects, at the catch-up.
struct WatchRegistry {
    typealias Callback = @Sendable () -> Void

    private struct Watcher {
        let callback: Callback
        /// Whether the watcher had its first call.
        var isLive: Bool
    }

    /// A change announced by a notification.
    enum Announced: Equatable {
        /// A write of the key, with the version it gave the row.
        case version(Int64)
        /// The row was deleted (by hand: the storage keeps a row for a removed key).
        case deleted
    }

    private var watchers: [String: [UInt64: Watcher]] = [:]
    private var known: [String: Int64] = [:]
    private var lastID: UInt64 = 0

    var isEmpty: Bool { watchers.isEmpty }

    /// Every watched key.
    var keys: [String] { Array(watchers.keys) }

    /// Adds a watcher of `key`; returns its identifier, for ``remove(_:of:)``, and its first call if `isListening`
    /// (then every later change reaches it).
    mutating func add(
        _ callback: @escaping Callback, of key: String, isListening: Bool
    ) -> (id: UInt64, firstCall: Callback?) {
        lastID += 1
        watchers[key, default: [:]][lastID] = Watcher(callback: callback, isLive: isListening)
        return (lastID, isListening ? callback : nil)
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

    /// The versions read for `keys` after (re)listening (`0` or missing: no row); returns whom to call.
    mutating func caughtUp(_ versions: [String: Int64], for keys: [String]) -> [Callback] {
        keys.flatMap { key in learned(versions[key] ?? 0, of: key) }
    }

    /// Calls every watcher of `key` if `version` is news, and those that never had a call in any case.
    private mutating func learned(_ version: Int64, of key: String) -> [Callback] {
        guard var keyWatchers = watchers[key] else { return [] }
        let isNews = known[key].map { current in version == 0 ? current != 0 : version > current } ?? true
        if isNews { known[key] = version }
        var callbacks: [Callback] = []
        for (id, watcher) in keyWatchers where isNews || !watcher.isLive {
            callbacks.append(watcher.callback)
            keyWatchers[id]?.isLive = true
        }
        watchers[key] = keyWatchers
        return callbacks
    }
}
