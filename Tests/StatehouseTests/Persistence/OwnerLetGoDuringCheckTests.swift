import Dispatch
import Foundation
import StatehouseTesting
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The outside-change check (on the persistence's writer) holds its owner only to read its change count (a
/// container's is read through its link, without the container), and the applier reads the owner again when it runs:
/// an owner let go during a check ends on the thread that let it go, where its `deinit` writes what is pending and
/// frees its key. The owner is let go at each point of a check: during the storage's reads, between the check and the
/// applier, during `takeStoredValue`, while its count is read, while it is busy; containers and stores (many threads
/// at once: `OwnerLetGoUnderContentionTests`). Every wait for a
/// signal happens on threads of the test's own, never on the cooperative pool: while a writer is held by a test gate,
/// flushes waiting for it there could hold every pool thread.
@Suite("An owner let go at each point of a check of its storage", .serialized)
struct OwnerLetGoDuringCheckTests {
    /// What the thread that let the owner go found when it went on.
    private struct AfterLetGo: Sendable {
        var stored: Int?
        var keyWasLive: Bool
        var duplicatesHere: Int
        var duplicatesElsewhere: Int?
    }

    /// A container let go while a check is inside the storage's fingerprint read ends there: the thread that let
    /// it go finds its pending change written and its key free, and a new container of the key made on that thread,
    /// then on another it tells, is no duplicate. A second check, queued meanwhile, finds no owner and does not take
    /// that for a busy one (no retry).
    @Test func aContainerLetGoDuringTheReadsEndsThereWithItsWriteStoredAndItsKeyFree() async throws {
        let storage = CheckedStorage()
        let key = "ownerDuringCheck.reads.\(UUID().uuidString)"
        let holder = Locked<StateContainer<Int>?>(followedContainer(key, on: storage))
        let persistence = try #require(holder.withLock { $0?.persistence } as? StatePersistence<Int>)
        await drained(persistence)
        holder.withLock { $0?.modify(5) }  // pending: the clock never ticks

        let (entered, proceed) = holdNextCheck(storage)
        let outcome = await offThePool { () -> (endedWhileHeld: Bool, after: AfterLetGo?)? in
            guard entered.wait(timeout: .now() + .seconds(signalPatience)) == .success else {
                storage.holdsNextFingerprint.withLock { $0 = nil }
                return nil
            }
            storage.notify()  // a second check, queued behind the held one
            let after = Locked<AfterLetGo?>(nil)
            let done = DispatchSemaphore(value: 0)
            let elsewhere = DispatchSemaphore(value: 0)
            let elsewhereDone = DispatchSemaphore(value: 0)
            Thread {
                _ = elsewhere.wait(timeout: .now() + .seconds(signalPatience))
                let reports = duplicateKeyReports(of: key) { makeAndLetGoAfterItsFirstCheck(key, on: storage) }
                after.withLock { $0?.duplicatesElsewhere = reports }
                elsewhereDone.signal()
            }.start()
            Thread {
                _ = holder.withLock { $0.take() }
                let found = AfterLetGo(
                    stored: storedValue(storage, key), keyWasLive: KeyRegistry.shared.isLive(key),
                    duplicatesHere: duplicateKeyReports(of: key) { makeAndLetGoAfterItsFirstCheck(key, on: storage) }
                )
                after.withLock { $0 = found }
                elsewhere.signal()
                done.signal()
            }.start()
            // Its `deinit` started (it stopped following) while the check is still held. Not read through
            // `container`: see `CheckedStorage.watcherCount`.
            let endedWhileHeld = spinWait(timeout: .seconds(signalPatience)) { storage.watcherCount == 0 }
            proceed.signal()
            guard done.wait(timeout: .now() + .seconds(signalPatience)) == .success,
                elsewhereDone.wait(timeout: .now() + .seconds(signalPatience)) == .success
            else { return (endedWhileHeld, nil) }
            return (endedWhileHeld, after.withLock { $0 })
        }
        let seen = try #require(outcome, "no check started")
        #expect(seen.endedWhileHeld, "the check kept the container alive after its last reference went")
        let after = try #require(seen.after, "letting the container go did not return")
        #expect(after.stored == 5, "the pending change was not written when its last reference went")
        #expect(!after.keyWasLive, "the key was still taken when the thread that let the container go went on")
        #expect(after.duplicatesHere == 0)
        #expect(after.duplicatesElsewhere == 0)
        // The queued check ran before the container's flush (the writer is serial): it found no owner. Had it taken
        // that for a busy one, it would have asked again after a back-off, and the next back-off would be 2 ms.
        #expect(persistence.machine.withLock { $0.ownerWasBusy() } == .milliseconds(1))
    }

    /// The same for a persisted store: let go during the reads, it ends on the thread that let it go, which then
    /// finds its pending state written.
    @Test func aStoreLetGoDuringTheReadsEndsThereWithItsStateStored() async throws {
        let storage = CheckedStorage()
        let key = "ownerDuringCheck.storeReads.\(UUID().uuidString)"
        let holder = Locked<Store<Int, Int>?>(followedStore(key, on: storage))
        let persistence = try #require(holder.withLock { $0?.persistence } as? StatePersistence<Int>)
        await drained(persistence)
        holder.withLock { $0?.dispatch(5) }  // pending: the clock never ticks

        let (entered, proceed) = holdNextCheck(storage)
        let outcome = await offThePool { () -> (endedWhileHeld: Bool, stored: Int??)? in
            guard entered.wait(timeout: .now() + .seconds(signalPatience)) == .success else {
                storage.holdsNextFingerprint.withLock { $0 = nil }
                return nil
            }
            let found = Locked<Int??>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = holder.withLock { $0.take() }
                found.withLock { $0 = .some(storedValue(storage, key)) }
                done.signal()
            }.start()
            let endedWhileHeld = spinWait(timeout: .seconds(signalPatience)) { storage.watcherCount == 0 }
            proceed.signal()
            guard done.wait(timeout: .now() + .seconds(signalPatience)) == .success else {
                return (endedWhileHeld, nil)
            }
            return (endedWhileHeld, found.withLock { $0 })
        }
        let seen = try #require(outcome, "no check started")
        #expect(seen.endedWhileHeld, "the check kept the store alive after its last reference went")
        let storedState = try #require(seen.stored, "letting the store go did not return")
        #expect(storedState == 5, "the pending state was not written when the store's last reference went")
    }

    /// A container let go after a check read an outside value and before the applier runs (the applier is busy):
    /// it ends at once, frees its key, and the value is never applied to it (its listeners hear nothing after it
    /// was let go).
    @Test func aContainerLetGoBetweenTheCheckAndTheApplierEndsAndIsNeverHandedTheValue() async throws {
        let storage = CheckedStorage()
        let key = "ownerDuringCheck.applier.\(UUID().uuidString)"
        let holder = Locked<StateContainer<Int>?>(followedContainer(key, on: storage, writes: .writeThrough))
        let container = SharedWeak(holder.withLock { $0 })
        let persistence = try #require(holder.withLock { $0?.persistence } as? StatePersistence<Int>)
        await drained(persistence)
        let heard = Recorder<Int>()
        let token = try #require(holder.withLock { $0?.observe { heard.append($0) } })

        let applierHeld = DispatchSemaphore(value: 0)
        let applierGoes = DispatchSemaphore(value: 0)
        persistence.applier.async {
            applierHeld.signal()
            _ = applierGoes.wait(timeout: .now() + .seconds(signalPatience))
        }
        try storage.base.save(Data("41".utf8), key: key)  // another process
        storage.notify()
        let outcome = await offThePool { () -> (endedAtOnce: Bool, keyWasLive: Bool)? in
            defer { applierGoes.signal() }
            guard applierHeld.wait(timeout: .now() + .seconds(signalPatience)) == .success else { return nil }
            persistence.writer.sync {}  // the check read 41 and queued its hand-over behind the held applier
            let found = Locked<(endedAtOnce: Bool, keyWasLive: Bool)?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = holder.withLock { $0.take() }
                found.withLock { $0 = (container.object == nil, KeyRegistry.shared.isLive(key)) }
                done.signal()
            }.start()
            guard done.wait(timeout: .now() + .seconds(signalPatience)) == .success else { return nil }
            applierGoes.signal()
            persistence.applier.sync {}  // the hand-over ran
            return found.withLock { $0 }
        }
        let seen = try #require(outcome, "the check or the let-go did not happen")
        #expect(seen.endedAtOnce, "the queued hand-over kept the container alive after its last reference went")
        #expect(!seen.keyWasLive)
        #expect(!heard.elements.contains(41), "the outside value was applied to a container already let go")
        #expect(storedValue(storage, key) == 41)
        token.cancel()
    }

    /// An owner whose lock is its own (as a store's is), let go while the check asks for its change count — the one
    /// call during which the writer holds it — ends on the writer: its `deinit` flushes there, without waiting for
    /// the writer it runs on, and its pending change is written. Meanwhile the thread that let it go went on with
    /// the key still taken, and an owner of the key it made then was reported a duplicate: recorded as a known issue
    /// (a fix makes this test fail until `withKnownIssue` is removed). Containers do not have it: their count is read
    /// through their link (`ChangeCountReaderTests`).
    @Test func anOwnerLetGoDuringItsChangeCountEndsOnTheWriterWithoutDeadlockAndWritesItsChange() async throws {
        let storage = CheckedStorage()
        let key = "ownerDuringCheck.count.\(UUID().uuidString)"
        let clock = ManualClock()
        let (_, persistence) = StatePersistence.load(
            key: key, storage: storage, default: 0, codec: .json, writes: .coalesced,
            externalChanges: .watch(safetyNet: .seconds(3600)), clock: clock
        )
        let controls = GatedOwner.Controls()
        let holder = Locked<GatedOwner?>(GatedOwner(key: key, persistence: persistence, controls: controls))
        holder.withLock { owner in owner.map { persistence.start(owner: $0) } }
        await drained(persistence)
        controls.count.withLock { $0 = 1 }
        persistence.changed(5, count: 1)  // a change, pending: the clock never ticks

        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        controls.holdsNextCount.withLock { $0 = (entered, proceed) }
        storage.notify()
        let endedOn = controls.endedOn
        let outcome = await offThePool {
            () -> (letGoOn: (thread: UInt, keyWasLive: Bool, duplicates: Int), ended: Bool)? in
            guard entered.wait(timeout: .now() + .seconds(signalPatience)) == .success else {
                controls.holdsNextCount.withLock { $0 = nil }
                return nil
            }
            let letGoOn = Locked<(thread: UInt, keyWasLive: Bool, duplicates: Int)?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = holder.withLock { $0.take() }
                let keyWasLive = KeyRegistry.shared.isLive(key)
                let duplicates = duplicateKeyReports(of: key) { withExtendedLifetime(StateContainer(0, key: key)) {} }
                letGoOn.withLock { $0 = (currentThreadID(), keyWasLive, duplicates) }
                done.signal()
            }.start()
            // The writer holds the owner for the call: letting it go elsewhere returns at once.
            guard done.wait(timeout: .now() + .seconds(signalPatience)) == .success else { return nil }
            proceed.signal()
            let ended = spinWait(timeout: .seconds(signalPatience)) { endedOn.count == 1 }
            return letGoOn.withLock { $0 }.map { (letGoOn: $0, ended: ended) }
        }
        let seen = try #require(outcome, "no check started, or letting the owner go did not return")
        // The moment left for owners that read their own count (Benchmarks/README.md): the thread that let the owner
        // go goes on while its key is still taken, and an owner of the key made then is reported a duplicate.
        withKnownIssue("an owner held while its check reads its change count ends on the writer, later") {
            #expect(!seen.letGoOn.keyWasLive)
            #expect(seen.letGoOn.duplicates == 0)
        }
        #expect(seen.ended, "the owner's deinit, on the writer, did not end")
        #expect(endedOn.elements != [seen.letGoOn.thread], "expected to end on the writer, where the check held it")
        #expect(storedValue(storage, key) == 5, "the owner ended on the writer without writing its pending change")
        #expect(!KeyRegistry.shared.isLive(key))
    }

    /// A store kept busy (its reducer blocks, its lock held) when a check comes: the check asks again later. Let go
    /// meanwhile, it ends on the thread that finishes the action, writing its state, which no older outside value
    /// replaces; a check that then finds no store does not take it for a busy one.
    @Test func aBusyStoreLetGoEndsWhereItsActionEndsAndKeepsItsState() async throws {
        let storage = CheckedStorage()
        let key = "ownerDuringCheck.busyStore.\(UUID().uuidString)"
        let clock = ManualClock()
        let inReducer = DispatchSemaphore(value: 0)
        let leaveReducer = DispatchSemaphore(value: 0)
        let holder = Locked<Store<Int, Int>?>(
            followedStore(key, on: storage, clock: clock) { state, action in
                if action == 7 {
                    inReducer.signal()
                    _ = leaveReducer.wait(timeout: .now() + .seconds(signalPatience))
                }
                state = action
            }
        )
        let store = SharedWeak(holder.withLock { $0 })
        let persistence = try #require(holder.withLock { $0?.persistence } as? StatePersistence<Int>)
        await drained(persistence)
        #expect(await eventually { clock.sleepers() == 1 })  // the safety net

        try storage.base.save(Data("100".utf8), key: key)  // another process, before the action below
        let actionDone = DispatchSemaphore(value: 0)
        Thread {
            do {
                let dispatching = holder.withLock { $0 }
                dispatching?.dispatch(7)
            }
            actionDone.signal()
        }.start()
        #expect(await waitOffThePool(for: inReducer))
        storage.notify()
        // The check found the store busy and asks again after a back-off, on the clock.
        #expect(await eventually { clock.sleepers() == 2 })
        await offThePool { _ = holder.withLock { $0.take() } }  // not the last reference: the action holds the store
        #expect(store.object != nil)
        leaveReducer.signal()
        #expect(await waitOffThePool(for: actionDone))
        #expect(store.object == nil, "the store did not end where its action ended")
        #expect(storedValue(storage, key) == 7, "the store's state was lost, or an older outside value replaced it")

        // A check now finds no owner: one busy check so far (the next back-off 2 ms); a second would make it 4.
        persistence.requestCheck()
        await drained(persistence)
        #expect(persistence.machine.withLock { $0.ownerWasBusy() } == .milliseconds(2))
        clock.advance(by: .seconds(7200))  // the retry finds no owner; nothing is left asleep
        #expect(storedValue(storage, key) == 7)
    }

    /// A container let go while the applier is inside `takeStoredValue` (a listener of the outside value runs): the
    /// call holds it, so the thread that let it go returns at once (having made a change: written through, it waits
    /// for the writer, which must not be where the listener runs); it ends on the applier once the call returns,
    /// writing the change made meanwhile if it is still pending, and frees its key; nothing deadlocks.
    @Test(arguments: [false, true])
    func aContainerLetGoDuringTakeStoredValueEndsOnTheApplierAndWritesItsChange(writeThrough: Bool) async throws {
        let storage = CheckedStorage()
        let key = "ownerDuringCheck.take.\(UUID().uuidString)"
        let holder = Locked<StateContainer<Int>?>(
            followedContainer(key, on: storage, writes: writeThrough ? .writeThrough : .coalesced)
        )
        let container = SharedWeak(holder.withLock { $0 })
        let persistence = try #require(holder.withLock { $0?.persistence } as? StatePersistence<Int>)
        await drained(persistence)
        let inListener = DispatchSemaphore(value: 0)
        let leaveListener = DispatchSemaphore(value: 0)
        let heard = Recorder<Int>()
        let token = try #require(
            holder.withLock { container in
                container?.observe { value in
                    heard.append(value)
                    guard value == 41 else { return }
                    inListener.signal()
                    _ = leaveListener.wait(timeout: .now() + .seconds(signalPatience))
                }
            }
        )
        try storage.base.save(Data("41".utf8), key: key)  // another process
        storage.notify()
        let outcome = await offThePool {
            () -> (letGoReturned: Bool, heldForTheCall: Bool, ended: Bool)? in
            defer { leaveListener.signal() }
            guard inListener.wait(timeout: .now() + .seconds(signalPatience)) == .success else { return nil }
            let done = DispatchSemaphore(value: 0)
            Thread {
                holder.withLock { $0?.modify(6) }  // its listeners' call handed to the applier's delivery
                _ = holder.withLock { $0.take() }
                done.signal()
            }.start()
            let letGoReturned = done.wait(timeout: .now() + .seconds(signalPatience)) == .success
            let heldForTheCall = container.object != nil
            leaveListener.signal()
            let ended = spinWait(timeout: .seconds(signalPatience)) {
                container.object == nil && !KeyRegistry.shared.isLive(key)
            }
            return (letGoReturned, heldForTheCall, ended)
        }
        let seen = try #require(outcome, "the outside value never reached the listener")
        #expect(seen.letGoReturned, "letting the container go waited for the applier's call")
        #expect(seen.heldForTheCall, "the applier did not hold the container for its call")
        #expect(seen.ended, "the container did not end once the applier's call returned")
        #expect(storedValue(storage, key) == 6, "the change made during the call was not written when the container ended")
        #expect(heard.elements.first == 41)
        token.cancel()
    }
}
