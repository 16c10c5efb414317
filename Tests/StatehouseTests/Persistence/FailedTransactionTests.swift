// An `update` whose transaction fails after its body ran must never become a blind save of a value computed from
// data the storage no longer holds (issue 15's lost increments): it runs again from what the storage now holds.
import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport
import StatehouseTesting

@Suite(.serialized) struct FailedTransactionTests {
    private func counter(
        _ storage: FlakyTransactionalStorage, key: String, writes: WritePolicy = .writeThrough
    ) -> StateContainer<Int> {
        StateContainer(0, key: key, storage: storage, codec: .json, writes: writes, externalChanges: .ignore,
                       clock: ManualClock())
    }

    @Test func anUpdateWhoseTransactionFailsWhileAnotherWriterIncrementsLosesNeitherIncrement() throws {
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.conflict"
        try storage.save(Data("5".utf8), key: key)
        let count = counter(storage, key: key)
        storage.inject(.conflict())
        let result = count.update { $0 += 1; return $0 }
        try count.flush()
        #expect(storage.outsideIncrements == 1)
        #expect(try storage.storedCount(key: key) == 7)
        #expect(count.value == 7)
        #expect(result == 7)
        #expect(count.storageError?.value == nil)
    }

    @Test func theResultReturnedIsTheOneOfTheAttemptThatWasStoredAndListenersHearOnlyIt() throws {
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.result"
        let count = counter(storage, key: key)
        let heard = Recorder<Int>()
        let token = count.observe { heard.append($0) }
        defer { token.cancel() }
        storage.inject(.conflict(), .conflict())
        let runs = Locked(0)
        let result = count.update { value -> Int in
            runs.withLock { $0 += 1 }
            value += 10
            return value
        }
        #expect(runs.withLock { $0 } == 3)
        #expect(result == 12)
        #expect(count.value == 12)
        #expect(heard.elements == [12])
        #expect(count.changeCount == 1)
        #expect(try storage.storedCount(key: key) == 12)
    }

    @Test func anErrorThrownByTheBodyIsTheOneOfTheAttemptThatWasStored() throws {
        struct Refused: Error, Equatable { let seen: Int }
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.throws"
        let count = counter(storage, key: key)
        storage.inject(.conflict())
        #expect(throws: Refused(seen: 2)) {
            try count.update { (value: inout Int) throws(Refused) in
                value += 1
                throw Refused(seen: value)
            }
        }
        #expect(count.value == 2)
        #expect(try storage.storedCount(key: key) == 2)
    }

    @Test func whenEveryAttemptFailsTheUpdateIsReportedAndNeverWrittenLater() throws {
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.exhausted"
        try storage.save(Data("5".utf8), key: key)
        var count: StateContainer<Int>? = counter(storage, key: key)
        let heard = Recorder<Int>()
        let token = count?.observe { heard.append($0) }
        defer { token?.cancel() }
        storage.inject(.conflict(), .conflict(), .conflict(), .conflict(), .conflict(), .conflict(), .conflict())
        count?.update { $0 += 1 }
        let attempts = storage.transactionCount
        #expect(attempts > 1)
        let error = try #require(count?.storageError?.value)
        #expect(error.kind == .io)
        #expect(error.key == key)
        #expect(error.operation == .transact)
        #expect(count?.value == 5)
        #expect(heard.elements.isEmpty)
        #expect(try storage.storedCount(key: key) == 5 + attempts)
        try count?.flush()
        count = nil  // a container going away writes what is pending
        #expect(try storage.storedCount(key: key) == 5 + attempts)
        #expect(storage.outsideIncrements == attempts)
    }

    @Test func theUpdateAfterOneThatFailedStartsFromTheStoredValue() throws {
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.after"
        let count = counter(storage, key: key)
        storage.inject(.conflict(), .conflict(), .conflict(), .conflict(), .conflict(), .conflict(), .conflict())
        count.update { $0 += 1 }
        #expect(count.value == 0)
        count.update { $0 += 1 }
        #expect(count.value == storage.outsideIncrements + 1)
        #expect(try storage.storedCount(key: key) == storage.outsideIncrements + 1)
    }

    @Test func aCommitWhoseAnswerWasLostIsNotRunAgain() async throws {
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.unknown"
        try storage.save(Data("5".utf8), key: key)
        let count = counter(storage, key: key)
        storage.inject(.commitAnswerLost)
        count.update { $0 += 1 }
        #expect(storage.transactionCount == 1)
        #expect(try storage.storedCount(key: key) == 6)
        #expect(count.storageError?.value?.cause is FlakyTransactionalStorage.CommitAnswerLost)
        try count.flush()
        #expect(try storage.storedCount(key: key) == 6)
        count.update { $0 += 1 }
        #expect(try storage.storedCount(key: key) == 7)
        #expect(count.value == 7)
    }

    @Test func aLocalChangeMadeBetweenAttemptsIsNeitherLostNorReordered() throws {
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.between"
        let count = counter(storage, key: key, writes: .coalesced(window: .seconds(3600)))
        storage.inject(.conflict(then: { [count] in count.modify(100) }))
        count.update { $0 += 1 }
        // The change came after the first attempt and before the second: the update applies to it.
        #expect(count.value == 101)
        try count.flush()
        #expect(try storage.storedCount(key: key) == 101)
    }

    @Test func aLocalChangeMadeWhileTheAnswerIsCommittedComesAfterTheUpdate() throws {
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.during"
        let count = counter(storage, key: key, writes: .coalesced(window: .seconds(3600)))
        let heard = Recorder<Int>()
        let token = count.observe { heard.append($0) }
        defer { token.cancel() }
        storage.inject(.pauseBeforeCommit(then: { [count] in count.modify(100) }))
        let result = count.update { $0 += 1; return $0 }
        #expect(result == 1)
        #expect(try storage.storedCount(key: key) == 1)
        #expect(count.value == 100)
        #expect(heard.elements == [100])
        try count.flush()
        #expect(try storage.storedCount(key: key) == 100)
    }

    @Test func manyThreadsUpdatingWhileTransactionsFailLoseNothingAndDoubleNothing() async throws {
        let storage = FlakyTransactionalStorage()
        let key = "failed.tx.hammer"
        let count = counter(storage, key: key)
        let heard = Recorder<Int>()
        let token = count.observe { heard.append($0) }
        defer { token.cancel() }
        storage.failEvery(3)
        let threads = 6, updates = 200
        await onNewThreads(threads) { _ in
            for _ in 0..<updates { count.update { $0 += 1 } }
        }
        let expected = threads * updates + storage.outsideIncrements
        #expect(storage.outsideIncrements > 0)
        #expect(count.value == expected)
        #expect(try storage.storedCount(key: key) == expected)
        #expect(count.storageError?.value == nil)
        #expect(await eventually { heard.elements.last == expected })
    }
}
