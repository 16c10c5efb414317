import Foundation
import Synchronization
@testable import Statehouse

/// A change-detecting storage around another that runs a hook once, inside its next `load`: on the thread that
/// loads, after it decided to load (a persisted owner's poller, once it saw an outside change), before the data is
/// read. Only `ChangeDetectingStorage`, never transactional.
final class LoadHookStorage: ChangeDetectingStorage {
    let base: any ChangeDetectingStorage
    private let hook = Locked<(@Sendable () -> Void)?>(nil)
    private let hookRuns = Atomic<Int>(0)

    init(_ base: any ChangeDetectingStorage) {
        self.base = base
    }

    /// Runs `body` inside the next `load`, once.
    func onNextLoad(_ body: @escaping @Sendable () -> Void) {
        hook.withLock { $0 = body }
    }

    /// How many hooks have run (and returned).
    var hookRunCount: Int {
        hookRuns.load(ordering: .sequentiallyConsistent)
    }

    private func takeHook() -> (@Sendable () -> Void)? {
        hook.withLock { slot in
            let taken = slot
            slot = nil
            return taken
        }
    }

    func load(key: String) throws -> Data? {
        if let body = takeHook() {
            body()
            hookRuns.add(1, ordering: .sequentiallyConsistent)
        }
        return try base.load(key: key)
    }

    func save(_ data: Data, key: String) throws {
        try base.save(data, key: key)
    }

    func remove(key: String) throws {
        try base.remove(key: key)
    }

    func fingerprint(key: String) throws -> StorageFingerprint {
        try base.fingerprint(key: key)
    }

    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try base.saveReturningFingerprint(data, key: key)
    }
}
