// An `update` whose transaction fails after its body ran must never become a blind save of a value computed from
// data the storage no longer holds (increments another writer made meanwhile would be lost): it runs again from what
// the storage now holds.
import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport
import StatehouseTesting

@Suite(.serialized) struct FailedTransactionTests {
    private func counter(
        _ storage: InMemoryStorage<ContinuousClock>, key: String, writes: WritePolicy = .writeThrough
    ) -> StateContainer<Int> {
        StateContainer(0, key: key, storage: storage, codec: .json, writes: writes, externalChanges: .ignore,
                       clock: ManualClock())
    }

    @Test func anUpdateWhoseTransactionFailsWhileAnotherWriterIncrementsLosesNeitherIncrement() throws {
        let storage = InMemoryStorage()
        let key = "failed.tx.conflict"
        try storage.save(Data("5".utf8), key: key)
        let count = counter(storage, key: key)
        storage.inject(storage.conflict(on: key), into: .transact)
        let result = count.update { $0 += 1; return $0 }
        try count.flush()
        #expect(storage.faultCount(of: .transact) == 1)
        #expect(try storage.storedCount(key: key) == 7)
        #expect(count.value == 7)
        #expect(result == 7)
        #expect(count.storageError?.value == nil)
    }

    @Test func theResultReturnedIsTheOneOfTheAttemptThatWasStoredAndListenersHearOnlyIt() throws {
        let storage = InMemoryStorage()
        let key = "failed.tx.result"
        let count = counter(storage, key: key)
        let heard = Recorder<Int>()
        let token = count.observe { heard.append($0) }
        defer { token.cancel() }
        storage.inject(storage.conflict(on: key), into: .transact, .times(2))
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
        let storage = InMemoryStorage()
        let key = "failed.tx.throws"
        let count = counter(storage, key: key)
        storage.inject(storage.conflict(on: key), into: .transact)
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
        let storage = InMemoryStorage()
        let key = "failed.tx.exhausted"
        try storage.save(Data("5".utf8), key: key)
        var count: StateContainer<Int>? = counter(storage, key: key)
        let heard = Recorder<Int>()
        let token = count?.observe { heard.append($0) }
        defer { token?.cancel() }
        storage.inject(storage.conflict(on: key), into: .transact, .times(7))
        count?.update { $0 += 1 }
        let attempts = storage.callCount(of: .transact)
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
        #expect(storage.faultCount(of: .transact) == attempts)
    }

    @Test func theUpdateAfterOneThatFailedStartsFromTheStoredValue() throws {
        let storage = InMemoryStorage()
        let key = "failed.tx.after"
        let count = counter(storage, key: key)
        storage.inject(storage.conflict(on: key), into: .transact, .times(7))
        count.update { $0 += 1 }
        #expect(count.value == 0)
        count.update { $0 += 1 }
        #expect(count.value == storage.faultCount(of: .transact) + 1)
        #expect(try storage.storedCount(key: key) == storage.faultCount(of: .transact) + 1)
    }

    @Test func aCommitWhoseAnswerWasLostIsNotRunAgain() async throws {
        let storage = InMemoryStorage()
        let key = "failed.tx.unknown"
        try storage.save(Data("5".utf8), key: key)
        let count = counter(storage, key: key)
        storage.inject(.failAfterCommit, into: .transact)
        count.update { $0 += 1 }
        #expect(storage.callCount(of: .transact) == 1)
        #expect(try storage.storedCount(key: key) == 6)
        #expect(count.storageError?.value.map(storage.outcomeIsUnknown(after:)) == true)
        try count.flush()
        #expect(try storage.storedCount(key: key) == 6)
        count.update { $0 += 1 }
        #expect(try storage.storedCount(key: key) == 7)
        #expect(count.value == 7)
    }

    @Test func aLocalChangeMadeBetweenAttemptsIsNeitherLostNorReordered() throws {
        let storage = InMemoryStorage()
        let key = "failed.tx.between"
        let count = counter(storage, key: key, writes: .coalesced(window: .seconds(3600)))
        storage.inject(storage.conflict(on: key, then: { [count] in count.modify(100) }), into: .transact)
        count.update { $0 += 1 }
        // The change came after the first attempt and before the second: the update applies to it.
        #expect(count.value == 101)
        try count.flush()
        #expect(try storage.storedCount(key: key) == 101)
    }

    @Test func aLocalChangeMadeWhileTheAnswerIsCommittedComesAfterTheUpdate() throws {
        let storage = InMemoryStorage()
        let key = "failed.tx.during"
        let count = counter(storage, key: key, writes: .coalesced(window: .seconds(3600)))
        let heard = Recorder<Int>()
        let token = count.observe { heard.append($0) }
        defer { token.cancel() }
        storage.inject(.run { [count] in count.modify(100) }, into: .transact)
        let result = count.update { $0 += 1; return $0 }
        #expect(result == 1)
        #expect(try storage.storedCount(key: key) == 1)
        #expect(count.value == 100)
        #expect(heard.elements == [100])
        try count.flush()
        #expect(try storage.storedCount(key: key) == 100)
    }

    /// Every update either commits once or, after its last try failed, not at all; every other writer's increment
    /// stays. The tries of one update are spread among the other threads' (its backoff does not hold the writer),
    /// so an update may meet the every-third-call fault at each of its tries and give up: it then ran the most
    /// tries there are, which bounds how many updates may be missing.
    @Test func manyThreadsUpdatingWhileTransactionsFailLoseNothingAndDoubleNothing() async throws {
        let storage = InMemoryStorage()
        let key = "failed.tx.hammer"
        let count = counter(storage, key: key)
        let heard = Recorder<Int>()
        let token = count.observe { heard.append($0) }
        defer { token.cancel() }
        storage.inject(storage.conflict(on: key), into: .transact, .every(3))
        let threads = 6, updates = 200
        let mayHaveGivenUp = SharedCounter()
        await onNewThreads(threads) { _ in
            for _ in 0..<updates {
                let tries = SharedCounter()
                count.update { value in
                    tries.increment()
                    value += 1
                }
                if tries.value == PersistenceMachine<Int>.transactionAttempts { mayHaveGivenUp.increment() }
            }
        }
        let expected = threads * updates + storage.faultCount(of: .transact)
        let stored = try #require(try storage.storedCount(key: key))
        #expect(storage.faultCount(of: .transact) > 0)
        #expect((expected - mayHaveGivenUp.value)...expected ~= stored, "lost or doubled: \(stored) of \(expected)")
        #expect(count.value == stored)
        #expect(await eventually { heard.elements.last == stored })
    }
}

extension InMemoryStorage {
    /// A transaction rolled back because another writer changed the key, as PostgreSQL's is when its connection is
    /// lost and another process increments the counter before a new connection locks it: the transform runs, nothing
    /// is stored, the other process adds one to the stored counter, then `then` runs, and the transaction throws.
    fileprivate func conflict(on key: String, then: @escaping @Sendable () -> Void = {}) -> InMemoryStorageFault {
        let refusal = StorageError(
            .io, key: key, operation: .transact, message: "Injected: another writer changed the key; try again."
        )
        return .fail(refusal) { [self] in
            // Bytes that are not a counter fail the test where it reads the count.
            try? changeOutside(key: key) { data in
                let stored = try data.map { try JSONDecoder().decode(Int.self, from: $0) } ?? 0
                return try JSONEncoder().encode(stored + 1)
            }
            then()
        }
    }

    /// The counter stored under `key`, `nil` if nothing is stored.
    fileprivate func storedCount(key: String) throws -> Int? {
        try contents(of: key).map { try JSONDecoder().decode(Int.self, from: $0) }
    }
}
