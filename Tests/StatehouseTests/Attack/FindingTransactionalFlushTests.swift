// Findings of the adversarial review of issue 10's fix, kept as regression tests.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A transactional storage in memory, for the review.
private final class ReviewTransactionalStorage: TransactionalStorage, Sendable {
    private let data = Locked<[String: (Data, Int64)]>([:])
    func load(key: String) throws -> Data? { data.withLock { $0[key]?.0 } }
    func save(_ value: Data, key: String) throws { data.withLock { $0[key] = (value, ($0[key]?.1 ?? 0) + 1) } }
    func remove(key: String) throws { _ = data.withLock { $0.removeValue(forKey: key) } }
    func fingerprint(key: String) throws -> StorageFingerprint {
        data.withLock { $0[key].map { StorageFingerprint([$0.1]) } ?? .absent }
    }
    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        try data.withLock { table in
            let new = try transform(table[key]?.0)
            if let new { table[key] = (new, (table[key]?.1 ?? 0) + 1) } else { table[key] = nil }
            return table[key].map { StorageFingerprint([$0.1]) } ?? .absent
        }
    }
}

/// Crashes (or hangs) the process if it finds the bug: run alone.
@Suite(.serialized) struct FindingTransactionalFlushTests {
    /// PersistingState.md: "a flush at exit works even from inside a reducer or an `update` body". On a transactional
    /// storage the update body runs inside `writer.sync`; the exit flush is `writer.sync` again.
    @Test func flushPendingWritesInsideAnUpdateBodyOnATransactionalStorage() {
        let container = StateContainer(0, key: "review.tx.\(UUID().uuidString)", storage: ReviewTransactionalStorage())
        container.modify(1)   // pending (coalesced)
        container.update { value in
            value += 1
            StatehouseLifecycle.flushPendingWrites()   // what exit() runs via atexit
        }
    }
}
