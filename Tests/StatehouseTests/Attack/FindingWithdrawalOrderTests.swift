// Findings of the adversarial review of issue 13 (outside-change failures published through `storageError`).
import Foundation
import Testing
@testable import Statehouse
import StatehouseTesting

/// A check's failure and its withdrawal are published by two blocks on the global queue, which may run in either
/// order. These tests run `report` in the order the global queue may choose, without threads.
@Suite struct FindingWithdrawalOrderTests {
    private func persistence(_ key: String) -> StatePersistence<Int> {
        StatePersistence.load(
            key: key, storage: MemoryStorage(), default: 0, codec: .json, writes: .writeThrough,
            externalChanges: .ignore, clock: ManualClock()
        ).persistence
    }

    private func unreadable(_ key: String, _ message: String = "unreadable") -> StorageError {
        StorageError(.io, key: key, operation: .load, message: message)
    }

    /// Before the fix the withdrawal found nothing to clear, and the failure published after it stayed for good
    /// although the key reads fine.
    @Test func aWithdrawalPublishedBeforeItsFailureKeepsThatFailureOut() throws {
        let persistence = persistence("withdrawal.first")
        let failure = unreadable("withdrawal.first")
        let failed = persistence.machine.withLock { $0.checkFailed(failure) }
        let withdrawal = try #require(persistence.machine.withLock { $0.checkSucceeded(tookValue: false) })
        persistence.report(.withdrawn(number: withdrawal))
        persistence.report(.checkFailed(failure, number: failed))
        #expect(persistence.lastError.value == nil)
    }

    /// Two checks failed differently, the second's report is still on its way when a third check reads the key: the
    /// first failure, published, is withdrawn too (before the fix it stayed, since it is not the second's error).
    @Test func aWithdrawalClearsAnOlderCheckFailureStillPublished() throws {
        let persistence = persistence("withdrawal.older")
        let first = unreadable("withdrawal.older", "fingerprint failed")
        let second = unreadable("withdrawal.older", "load failed")
        let firstNumber = persistence.machine.withLock { $0.checkFailed(first) }
        let secondNumber = persistence.machine.withLock { $0.checkFailed(second) }
        let withdrawal = try #require(persistence.machine.withLock { $0.checkSucceeded(tookValue: false) })
        persistence.report(.checkFailed(first, number: firstNumber))
        persistence.report(.withdrawn(number: withdrawal))
        persistence.report(.checkFailed(second, number: secondNumber))
        #expect(persistence.lastError.value == nil)
    }

    /// A later check failed again: the withdrawal of the failure before it, published late, leaves it published.
    @Test func aLateWithdrawalLeavesALaterCheckFailurePublished() throws {
        let persistence = persistence("withdrawal.late")
        let first = unreadable("withdrawal.late", "first")
        let again = unreadable("withdrawal.late", "again")
        _ = persistence.machine.withLock { $0.checkFailed(first) }
        let withdrawal = try #require(persistence.machine.withLock { $0.checkSucceeded(tookValue: false) })
        let againNumber = persistence.machine.withLock { $0.checkFailed(again) }
        persistence.report(.checkFailed(again, number: againNumber))
        persistence.report(.withdrawn(number: withdrawal))
        #expect(persistence.lastError.value == again)
    }

    /// A withdrawal says nothing about a write: a write's failure published late stays published.
    @Test func aWithdrawalDoesNotKeepOutAWritesFailurePublishedAfterIt() throws {
        let persistence = persistence("withdrawal.write")
        let check = unreadable("withdrawal.write")
        let write = StorageError(.io, key: "withdrawal.write", operation: .save, message: "disk full")
        let checkNumber = persistence.machine.withLock { $0.checkFailed(check) }
        persistence.report(.checkFailed(check, number: checkNumber))
        _ = persistence.machine.withLock { $0.changed(PersistedSnapshot(value: 1, count: 1)) }
        guard case .write(_, let writeNumber) = persistence.machine.withLock({ $0.nextWrite() }) else {
            Issue.record("a pending change has a write")
            return
        }
        let withdrawal = try #require(persistence.machine.withLock { $0.checkSucceeded(tookValue: false) })
        persistence.report(.withdrawn(number: withdrawal))
        #expect(persistence.lastError.value == nil)
        persistence.report(.failed(write, number: writeNumber))
        #expect(persistence.lastError.value == write)
    }
}
