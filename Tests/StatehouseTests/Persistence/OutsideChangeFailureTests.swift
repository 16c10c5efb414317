import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// What another process stores, or removes, while a container follows it: bad data and failed reads are reported
/// through `storageError` and lose nothing; a removal is followed where the value can say "nothing stored".
@Suite("Outside changes that fail")
struct OutsideChangeFailureTests {
    /// A container following `storage` at `key` on a clock that never ticks: only notifications check.
    private func following<Value: Codable & Sendable>(
        _ initial: Value, key: String, on storage: NotifyingStorage
    ) -> StateContainer<Value> {
        StateContainer(
            initial, key: key, storage: storage, codec: .json, writes: .writeThrough,
            externalChanges: .watch(safetyNet: .seconds(3600)), clock: ManualClock()
        )
    }

    @Test func dataAnotherProcessStoredThatDoesNotDecodeIsKeptAsideAndReported() async throws {
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let count = following(0, key: "outside.undecodable", on: storage)
        count.modify(5)
        let alien = Data("not a number".utf8)
        try storage.base.save(alien, key: "outside.undecodable")  // another process, a newer format
        storage.notify()
        let errors = try #require(count.storageError)
        #expect(await eventually { errors.value?.kind == .undecodable })
        let error = try #require(errors.value)
        #expect(error.key == "outside.undecodable")
        #expect(error.operation == .decode)
        #expect(!error.message.contains("not a number"))
        let kept = try #require(error.keptAside)
        #expect(try storage.base.load(key: kept) == alien)
        #expect(count.value == 5)

        // Seen through a listener, not by reading `count.value` while the check runs: that read takes the
        // container's lock, and a check that found it held would ask again on the manual clock, which stands still.
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        try storage.base.save(Data("7".utf8), key: "outside.undecodable")
        storage.notify()
        #expect(await eventually { seen.elements.last == 7 })
        #expect(await eventually { errors.value == nil })
        token.cancel()
    }

    @Test func dataAnotherProcessStoredThatCannotBeKeptAsideIsNeverWrittenOver() async throws {
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let count = following(0, key: "outside.notKept", on: storage)
        count.modify(5)
        storage.failsSavingAside.withLock { $0 = true }
        let alien = Data("not a number".utf8)
        try storage.base.save(alien, key: "outside.notKept")
        storage.notify()
        let errors = try #require(count.storageError)
        #expect(await eventually { errors.value?.kind == .undecodable })
        #expect(errors.value?.keptAside == nil)

        // A local change, and a flush: neither writes over the bytes, both say why.
        count.modify(6)
        #expect(try storage.base.load(key: "outside.notKept") == alien)
        let refused = try #require(throws: StorageError.self) { try count.flush() }
        #expect(refused.kind == .undecodable && refused.operation == .save && refused.keptAside == nil)
        #expect(refused.message.contains("Not writing"))
        #expect(errors.value == refused)
        #expect(try storage.base.load(key: "outside.notKept") == alien)
        #expect(count.value == 6)

        // Once the bytes can be kept aside, the pending change is written, and the report cleared.
        storage.failsSavingAside.withLock { $0 = false }
        try count.flush()
        #expect(try storage.base.load(key: "outside.notKept") == Data("6".utf8))
        #expect(errors.value == nil)
        let kept = try #require(storage.keptAside.withLock { $0 }.last)
        #expect(try storage.base.load(key: kept) == alien)
    }

    @Test func aReadThatFailsWhileFollowingIsReportedAndClearedOnceReadsWorkAgain() async throws {
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let count = following(0, key: "outside.unreadable", on: storage)
        count.modify(1)
        storage.failsReads.withLock { $0 = true }
        storage.notify()
        let errors = try #require(count.storageError)
        #expect(await eventually { errors.value?.kind == .io })
        #expect(errors.value?.key == "outside.unreadable")
        #expect(count.value == 1)

        // Nothing changed meanwhile: reading works again, and that is enough to clear the report.
        storage.failsReads.withLock { $0 = false }
        storage.notify()
        #expect(await eventually { errors.value == nil })
        #expect(count.value == 1)
    }

    @Test func aWriteAfterAFailedReadClearsTheReport() async throws {
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let count = following(0, key: "outside.ordered", on: storage)
        storage.failsReads.withLock { $0 = true }
        storage.notify()
        let errors = try #require(count.storageError)
        #expect(await eventually { errors.value?.kind == .io })
        count.modify(2)  // written through: succeeds, and clears the report
        #expect(errors.value == nil)
        storage.failsReads.withLock { $0 = false }
        storage.notify()
        #expect(await eventually { (try? storage.base.load(key: "outside.ordered")) == Data("2".utf8) })
        #expect(errors.value == nil)
    }

    @Test func anOptionalRemovedByAnotherProcessBecomesNil() async throws {
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let rating = following(Int?.none, key: "outside.optional", on: storage)
        rating.modify(4)
        try storage.base.remove(key: "outside.optional")  // another process set it to nil
        storage.notify()
        #expect(await eventually { rating.value == nil })
        #expect(rating.storageError?.value == nil)
    }

    @Test func aPlainValueRemovedByAnotherProcessKeepsItsValue() async throws {
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let count = following(0, key: "outside.removed", on: storage)
        count.modify(4)
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        defer { token.cancel() }
        try storage.base.remove(key: "outside.removed")
        storage.notify()
        try count.flush()  // on the writer, after the check the notification queued
        try storage.base.save(Data("9".utf8), key: "outside.removed")
        storage.notify()
        #expect(await eventually { count.value == 9 })
        #expect(!seen.elements.contains(0))
        #expect(count.storageError?.value == nil)
    }
}
