import Foundation
import Statehouse

/// The data, faults and watchers of an ``InMemoryStorage``: the logic without the locking. Methods that change data
/// return the watchers to tell, which the storage calls after releasing its lock.
struct InMemoryStorageState<Instant: Sendable>: Sendable {
    typealias Watcher = @Sendable () -> Void

    private struct Entry: Sendable {
        var data: Data
        var version: Int64
    }

    private struct InjectedFault: Sendable {
        let fault: InMemoryStorageFault
        let operations: InMemoryStorageOperations
        let keys: InMemoryStorageKeys
        var times: InMemoryStorageFaultTimes
        /// Matching calls that reached this fault, for ``InMemoryStorageFaultTimes/every(_:)``.
        var reached = 0

        /// Whether this fault applies to the call, counting it if the fault is periodic.
        mutating func fires(on operation: InMemoryStorageOperations, key: String) -> Bool {
            guard operations.contains(operation), keys.matches(key) else { return false }
            switch times {
            case .times(let remaining):
                guard remaining > 0 else { return false }
                times = .times(remaining - 1)
                return true
            case .always:
                return true
            case .every(let period):
                reached += 1
                return reached % period == 0
            }
        }

        var isSpent: Bool {
            if case .times(let remaining) = times { return remaining <= 0 }
            return false
        }
    }

    private var entries: [String: Entry] = [:]
    /// Advanced by every change, so that a version names exactly one stored value.
    private var lastVersion: Int64 = 0
    private var faults: [InjectedFault] = []
    /// Calls and faults met, by the raw value of the single operation.
    private var calls: [UInt8: Int] = [:]
    private var injected: [UInt8: Int] = [:]
    /// The last change of each key: one per key, so that a test writing a million times holds a million nothing.
    private var lastChanges: [String: InMemoryStorageChange<Instant>] = [:]
    private var watchers: [String: [Int: Watcher]] = [:]
    private var lastWatcherID = 0

    // MARK: Data

    func data(for key: String) -> Data? {
        entries[key]?.data
    }

    func fingerprint(of key: String) -> StorageFingerprint {
        entries[key].map { StorageFingerprint([$0.version]) } ?? .absent
    }

    func lastChange(of key: String) -> InMemoryStorageChange<Instant>? {
        lastChanges[key]
    }

    var keys: [String] {
        entries.keys.sorted()
    }

    /// Stores `data` under `key` (`nil` removes it) and returns the fingerprint of exactly this change, with the
    /// watchers to tell.
    mutating func store(
        _ data: Data?, under key: String, at instant: Instant, outside: Bool
    ) -> (StorageFingerprint, [Watcher]) {
        lastVersion += 1
        entries[key] = data.map { Entry(data: $0, version: lastVersion) }
        lastChanges[key] = InMemoryStorageChange(key: key, data: data, instant: instant, isOutside: outside)
        return (fingerprint(of: key), watchers[key].map { Array($0.values) } ?? [])
    }

    // MARK: Faults

    mutating func inject(
        _ fault: InMemoryStorageFault, into operations: InMemoryStorageOperations, _ times: InMemoryStorageFaultTimes,
        keys: InMemoryStorageKeys
    ) {
        faults.append(InjectedFault(fault: fault, operations: operations, keys: keys, times: times))
    }

    mutating func removeFaults() {
        faults.removeAll()
    }

    /// Counts a call of `operation` on `key` and returns the fault it meets, if any: the first counted fault (`times`)
    /// in the order they were injected, else the first standing one (`always`, `every`).
    mutating func beginCall(_ operation: InMemoryStorageOperations, key: String) -> InMemoryStorageFault? {
        calls[operation.rawValue, default: 0] += 1
        guard !faults.isEmpty else { return nil }
        for counted in [true, false] {
            for index in faults.indices
            where faults[index].times.isCounted == counted && faults[index].fires(on: operation, key: key) {
                let fault = faults[index].fault
                if faults[index].isSpent { faults.remove(at: index) }
                injected[operation.rawValue, default: 0] += 1
                return fault
            }
        }
        return nil
    }

    func callCount(of operations: InMemoryStorageOperations) -> Int {
        calls.reduce(0) { $0 + (operations.rawValue & $1.key != 0 ? $1.value : 0) }
    }

    func faultCount(of operations: InMemoryStorageOperations) -> Int {
        injected.reduce(0) { $0 + (operations.rawValue & $1.key != 0 ? $1.value : 0) }
    }

    // MARK: Watchers

    mutating func addWatcher(of key: String, _ watcher: @escaping Watcher) -> Int {
        lastWatcherID += 1
        watchers[key, default: [:]][lastWatcherID] = watcher
        return lastWatcherID
    }

    mutating func removeWatcher(_ id: Int, of key: String) {
        watchers[key]?[id] = nil
        if watchers[key]?.isEmpty == true { watchers[key] = nil }
    }

    func watchers(of key: String?) -> [Watcher] {
        guard let key else { return watchers.values.flatMap(\.values) }
        return watchers[key].map { Array($0.values) } ?? []
    }

    func watcherCount(of key: String) -> Int {
        watchers[key]?.count ?? 0
    }
}

extension InMemoryStorageFaultTimes {
    /// Whether the fault runs out: counted faults are taken before standing ones.
    var isCounted: Bool {
        if case .times = self { return true }
        return false
    }
}
