import Dispatch
import Foundation
import StatehouseTesting
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("storageError: a failed write reported late does not outlive a successful flush", .serialized)
struct StorageErrorAfterFlushTests {
    /// A failed coalesced write whose report comes late, after a flush that succeeded: `storageError` is `nil` once
    /// the flush returned, and stays `nil`.
    @Test func storageErrorIsNilOnceAFlushSucceededAndStaysNil() async throws {
        let storage = InMemoryStorage()
        let count = StateContainer(0, key: "storageError", storage: storage.plain, writes: .coalesced(window: .milliseconds(1)))
        let blockers = ProcessInfo.processInfo.activeProcessorCount * 4
        for round in 1...100 {
            let failed = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            storage.inject(.fail(), into: .save, .always)
            // Met first: a fault with a count comes before a standing one.
            storage.inject(.fail(then: {
                // Inside the failing coalesced write: keep the global queue's threads busy until the flush below has
                // returned, so that a report of this failure sent there lands after the flush's own report (the order
                // this test guards against). Best effort: if dispatch adds threads, the test may pass falsely; every
                // blocker ends by itself after 2 s.
                for _ in 0..<blockers {
                    DispatchQueue.global().async { _ = release.wait(timeout: .now() + 2) }
                }
                failed.signal()
            }), into: .save)
            count.modify(round)
            let flushed = await offThePool { () -> Bool in
                guard failed.wait(timeout: .now() + .seconds(signalPatience)) == .success else { return false }
                defer { for _ in 0..<blockers { release.signal() } }
                storage.removeFaults()
                do {
                    try count.flush()
                    return true
                } catch {
                    return false
                }
            }
            #expect(flushed, "round \(round): the coalesced write did not fail, or the flush after it did")
            #expect(count.storageError?.value == nil, "round \(round): an error is shown right after a successful flush")
            // A window for a late report of the failed write to land (too short on a slow machine: the test then
            // passes falsely, never fails falsely).
            try await Task.sleep(for: .milliseconds(5))
            #expect(count.storageError?.value == nil, "round \(round): a failure reported after a successful flush")
        }
    }
}

/// A check's failure and its withdrawal are published by two blocks on the global queue, which may run in either
/// order. These tests run `report` in the orders the global queue may choose, without threads.
@Suite("storageError: a check's failure and its withdrawal, published in either order")
struct StorageErrorWithdrawalOrderTests {
    private func persistence(_ key: String) -> StatePersistence<Int> {
        StatePersistence.load(
            key: key, storage: MemoryStorage(), default: 0, codec: .json, writes: .writeThrough,
            externalChanges: .ignore, clock: ManualClock()
        ).persistence
    }

    private func unreadable(_ key: String, _ message: String = "unreadable") -> StorageError {
        StorageError(.io, key: key, operation: .load, message: message)
    }

    /// A withdrawal published before its failure keeps that failure out: it must not stay for good although the key
    /// reads fine.
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
    /// first failure, published, is withdrawn too, although it is not the second's error.
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
