import Foundation
import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Synchronization
import Testing

/// The in-memory storage for tests keeps the promises of a transactional, change-notifying storage, and its faults,
/// outside changes and counts do what they say.
@Suite("In-memory storage for tests")
struct InMemoryStorageTests {
    @Test(arguments: StorageConformance.checks)
    func keepsThePromisesOfAStorage(_ check: StorageConformance.Check) async throws {
        // Instances share nothing: every instance a check asks for is this one.
        let storage = InMemoryStorage()
        try await check.run(capabilities: [.changeDetection, .transactions]) { _ in storage }
    }

    @Test func everyChangeHasAFingerprintOfItsOwnAndTheLoadReadsItsOwn() throws {
        let storage = InMemoryStorage()
        let first = try storage.saveReturningFingerprint(Data([1]), key: "k")
        let second = try storage.saveReturningFingerprint(Data([1]), key: "k")
        #expect(first != second)
        let loaded = try storage.loadWithFingerprint(key: "k")
        #expect(loaded.data == Data([1]) && loaded.fingerprint == second)
        try storage.remove(key: "k")
        #expect(try storage.fingerprint(key: "k") == .absent)
        #expect(storage.keys.isEmpty)
    }

    @Test func aFailureInjectedForTheNextSavesFailsThemAndThenStops() throws {
        let storage = InMemoryStorage()
        storage.inject(.fail(), into: .save, .times(2))
        for _ in 0..<2 {
            let error = #expect(throws: StorageError.self) { try storage.save(Data([1]), key: "k") }
            #expect(error?.operation == .save && error?.key == "k")
            #expect(error?.message == "Injected failure of save on 'k'.")
        }
        try storage.save(Data([2]), key: "k")
        #expect(storage.contents(of: "k") == Data([2]))
        #expect(storage.callCount(of: .save) == 3 && storage.faultCount(of: .save) == 2)
    }

    @Test func aFaultAppliesOnlyToItsOperationsAndKeys() throws {
        let storage = InMemoryStorage()
        storage.inject(.fail(), into: .save, .always, keys: .keptAside)
        try storage.save(Data([1]), key: "count")
        #expect(throws: StorageError.self) { try storage.save(Data([1]), key: "count.undecodable.1-2") }
        #expect(try storage.load(key: "count") == Data([1]))
        storage.removeFaults()
        try storage.save(Data([1]), key: "count.undecodable.1-2")
        #expect(storage.keys == ["count", "count.undecodable.1-2"])
    }

    @Test func aPeriodicFaultTakesEveryNthCallThatNoCountedFaultTook() throws {
        let storage = InMemoryStorage()
        storage.inject(.fail(), into: .transact, .every(3))
        storage.inject(.fail(), into: .transact, .once)
        var failed: [Int] = []
        for call in 1...7 {
            do {
                _ = try storage.transact(key: "k") { _ in Data([UInt8(call)]) }
            } catch {
                failed.append(call)
            }
        }
        // Call 1 meets the counted fault; calls 2…7 reach the periodic one, which takes the third and sixth of them.
        #expect(failed == [1, 4, 7])
    }

    @Test func aFailedTransactionRunsItsTransformAndStoresNothingThenRunsItsFollowUp() throws {
        let storage = InMemoryStorage()
        try storage.save(Data([1]), key: "k")
        let seen = Mutex<[Data?]>([])
        storage.inject(.fail(then: { storage.changeOutside(key: "k", to: Data([9])) }), into: .transact)
        #expect(throws: StorageError.self) {
            try storage.transact(key: "k") { data in
                seen.withLock { $0.append(data) }
                return Data([2])
            }
        }
        #expect(seen.withLock { $0 } == [Data([1])])
        #expect(storage.contents(of: "k") == Data([9]))
        #expect(storage.lastChange(of: "k")?.isOutside == true)
    }

    @Test func aCommitWhoseAnswerIsLostLandsAndSaysItsOutcomeIsUnknown() throws {
        let storage = InMemoryStorage()
        storage.inject(.failAfterCommit, into: .transact)
        let error = #expect(throws: StorageError.self) { try storage.transact(key: "k") { _ in Data([3]) } }
        #expect(storage.contents(of: "k") == Data([3]))
        #expect(error.map(storage.outcomeIsUnknown(after:)) == true)
        #expect(!storage.outcomeIsUnknown(after: StorageError(.io, key: "k", message: "other")))
    }

    @Test func codeRunBetweenATransformAndItsCommitIsOverwrittenByTheCommit() throws {
        let storage = InMemoryStorage()
        try storage.save(Data([1]), key: "k")
        storage.inject(.run { storage.changeOutside(key: "k", to: Data([7])) }, into: .transact)
        _ = try storage.transact(key: "k") { data in Data([(data?.first ?? 0) + 1]) }
        #expect(storage.contents(of: "k") == Data([2]))
        #expect(storage.lastChange(of: "k")?.isOutside == false)
    }

    @Test func aDelayedSaveWaitsForTheClockAndStampsItsChangeWithTheClocksTime() async throws {
        let clock = ManualClock()
        let storage = InMemoryStorage(clock: clock)
        storage.inject(.delay(.seconds(5)), into: .save)
        async let saved: Void = offThePool { try storage.save(Data([1]), key: "k") }
        await clock.waitForSleepers(1)
        #expect(storage.contents(of: "k") == nil)
        clock.advance(by: .seconds(5))
        try await saved
        #expect(storage.contents(of: "k") == Data([1]))
        #expect(storage.lastChange(of: "k")?.instant == ManualClock.Instant(offset: .seconds(5)))
        clock.advance(by: .seconds(1))
        storage.changeOutside(key: "k", to: nil)
        #expect(storage.lastChange(of: "k")?.instant == ManualClock.Instant(offset: .seconds(6)))
        #expect(storage.lastChange(of: "k")?.data == nil)
    }

    @Test func watchersHearEveryChangeOfTheirKeyUntilTheWatchEnds() throws {
        let storage = InMemoryStorage()
        let calls = Mutex(0)
        let watch = try storage.watchChanges(of: "k") { calls.withLock { $0 += 1 } }
        let other = try storage.watchChanges(of: "other") { Issue.record("another key's watcher was told") }
        try storage.save(Data([1]), key: "k")
        _ = try storage.transact(key: "k") { _ in nil }
        storage.changeOutside(key: "k", to: Data([2]))
        storage.notifyWatchers(of: "k")
        #expect(calls.withLock { $0 } == 4)
        #expect(storage.watcherCount(of: "k") == 1)
        watch.cancel()
        try storage.save(Data([3]), key: "k")
        #expect(calls.withLock { $0 } == 4 && storage.watcherCount(of: "k") == 0)
        other.cancel()
    }

    @Test func aRefusedWatchThrowsTheInjectedError() {
        let storage = InMemoryStorage()
        let refusal = StorageError(.io, key: "k", operation: .watch, message: "No watch descriptors left.")
        storage.inject(.fail(refusal), into: .watch)
        #expect(throws: refusal) { _ = try storage.watchChanges(of: "k") {} }
        #expect(storage.watcherCount(of: "k") == 0)
    }

    @Test func aPersistedContainerFollowsAnOutsideChangeAndReportsAFailedSave() async throws {
        let storage = InMemoryStorage()
        let key = "count.\(UUID().uuidString)"
        let container = StateContainer(0, key: key, storage: storage)
        storage.changeOutside(key: key, to: try JSONEncoder().encode(5))
        #expect(await eventually { container.value == 5 })
        storage.inject(.fail(), into: .save, .always)
        container.modify(6)
        #expect(throws: StorageError.self) { try container.flush() }
        storage.removeFaults()
        container.modify(7)
        try container.flush()
        #expect(try JSONDecoder().decode(Int.self, from: #require(storage.contents(of: key))) == 7)
    }

    @Test func itsViewsShareItsDataAndFaultsAndOfferOnlyWhatTheySay() async throws {
        let storage = InMemoryStorage()
        let polled = storage.withoutNotifications
        let plain = storage.plain
        #expect(!(polled as Any is any ChangeNotifyingStorage))
        #expect(!(plain as Any is any ChangeDetectingStorage))
        try plain.save(Data([1]), key: "k")
        #expect(try polled.load(key: "k") == Data([1]))
        storage.inject(.fail(), into: .load)
        #expect(throws: StorageError.self) { try plain.load(key: "k") }
        #expect(storage.callCount(of: .save) == 1 && storage.callCount(of: .load) == 2)

        // A container on the view without notifications follows an outside change by polling.
        let key = "polled.\(UUID().uuidString)"
        let container = StateContainer(
            0, key: key, storage: polled, externalChanges: .poll(every: .milliseconds(1))
        )
        storage.changeOutside(key: key, to: try JSONEncoder().encode(3))
        #expect(await eventually { container.value == 3 })
        #expect(storage.watcherCount(of: key) == 0)
    }

    @Test func faultsFromManyThreadsAreEachMetOnce() async {
        let storage = InMemoryStorage()
        storage.inject(.fail(), into: .save, .times(500))
        let failures = Atomic(0)
        await onNewThreads(8) { thread in
            for round in 0..<250 {
                do { try storage.save(Data([UInt8(round % 256)]), key: "k\(thread)") } catch {
                    failures.add(1, ordering: .relaxed)
                }
            }
        }
        #expect(failures.load(ordering: .relaxed) == 500)
        #expect(storage.callCount(of: .save) == 2_000 && storage.faultCount(of: .all) == 500)
    }
}
