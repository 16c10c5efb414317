import Synchronization

/// The keys of the live containers in this process.
///
/// A key names a piece of state app-wide, and for a persisted container it also names the stored entry: two live
/// containers with one key would overwrite each other's data. Creating the second one is reported to
/// ``StatehouseDiagnostics`` rather than made an error, because `StateContainer.init` does not throw and a
/// duplicate in-memory key loses nothing by itself. Both containers keep working; the key is free again once all
/// containers using it are deallocated.
@usableFromInline
final class KeyRegistry: Sendable {
    @usableFromInline static let shared = KeyRegistry()

    private let liveCounts = Locked<[String: Int]>([:])
    private let anonymousCounter = Atomic<UInt64>(0)

    /// Records a container using `key`; the registration frees it when deallocated.
    @usableFromInline
    func register(_ key: String) -> KeyRegistration {
        let isDuplicate = liveCounts.withLock { counts in
            let count = counts[key, default: 0] + 1
            counts[key] = count
            return count > 1
        }
        if isDuplicate {
            StatehouseDiagnostics.report(.duplicateKey(key))
        }
        return KeyRegistration(key: key, registry: self)
    }

    fileprivate func release(_ key: String) {
        liveCounts.withLock { counts in
            let remaining = counts[key, default: 1] - 1
            counts[key] = remaining > 0 ? remaining : nil
        }
    }

    /// Whether a live container uses `key`.
    func isLive(_ key: String) -> Bool {
        liveCounts.withLock { $0[key] != nil }
    }

    /// A key no other container in this process has or will be given by this method.
    func uniqueKey(prefix: String) -> String {
        "\(prefix)#\(anonymousCounter.add(1, ordering: .relaxed).newValue)"
    }
}

/// A container's claim on its key, released when the container is deallocated.
@usableFromInline
final class KeyRegistration: Sendable {
    let key: String
    private let registry: KeyRegistry

    init(key: String, registry: KeyRegistry) {
        self.key = key
        self.registry = registry
    }

    deinit {
        registry.release(key)
    }
}
