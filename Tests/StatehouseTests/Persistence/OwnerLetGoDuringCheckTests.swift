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

/// Holds the next check of `storage` inside its fingerprint read (see `CheckedStorage.holdsNextFingerprint`), and
/// asks for one.
private func holdNextCheck(_ storage: CheckedStorage) -> (entered: DispatchSemaphore, proceed: DispatchSemaphore) {
    let hold = (entered: DispatchSemaphore(value: 0), proceed: DispatchSemaphore(value: 0))
    storage.holdsNextFingerprint.withLock { $0 = hold }
    storage.notify()
    return hold
}

/// A container of `key` on `storage` that follows its notifications, on a clock that never ticks unless the test
/// advances it: a coalesced change stays pending until the container ends or is flushed, and no poll checks.
private func followedContainer(
    _ key: String, on storage: some ChangeNotifyingStorage, writes: WritePolicy = .coalesced,
    clock: ManualClock = ManualClock()
) -> StateContainer<Int> {
    StateContainer(
        0, key: key, storage: storage, codec: .json, writes: writes,
        externalChanges: .watch(safetyNet: .seconds(3600)), clock: clock
    )
}

/// A store of `key` on `storage`, following it as ``followedContainer(_:on:writes:clock:)`` does; its state is the
/// last action.
private func followedStore(
    _ key: String, on storage: some ChangeNotifyingStorage, clock: ManualClock = ManualClock(),
    reducer: @escaping @Sendable (inout Int, Int) -> Void = { state, action in state = action }
) -> Store<Int, Int> {
    Store(
        initialState: 0, key: key, storage: storage, codec: .json, writes: .coalesced,
        externalChanges: .watch(safetyNet: .seconds(3600)), clock: clock,
        reducer: Store<Int, Int>.withoutEffects(reducer), middleware: []
    )
}

/// Waits, on a thread of its own, until the writer has done what was queued on it (the first check, say).
private func drained(_ persistence: StatePersistence<Int>) async {
    await offThePool { persistence.writer.sync {} }
}

/// Makes a followed container of `key` and lets it go once its first check is over: it then ends here. (Let go at
/// once, it could end on its writer, where that check may be asking for its change count — the one moment a check
/// holds an owner — and a container of the key made next could be reported a duplicate.)
private func makeAndLetGoAfterItsFirstCheck(_ key: String, on storage: some ChangeNotifyingStorage) {
    let container = followedContainer(key, on: storage)
    (container.persistence as? StatePersistence<Int>)?.writer.sync {}
    withExtendedLifetime(container) {}
}

/// How many duplicate-key reports about `key` making things in `body` caused (on this thread).
private func duplicateKeyReports(of key: String, _ body: () -> Void) -> Int {
    let reported = Recorder<StatehouseDiagnostic>()
    StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) { body() }
    return reported.elements.filter { $0.kind == .duplicateKey && $0.key == key }.count
}

private func stored(_ storage: CheckedStorage, _ key: String) -> Int? {
    (try? storage.base.load(key: key)).flatMap { String(data: $0, encoding: .utf8) }.flatMap { Int($0) }
}

/// An owner of its own (as a container or store is: it frees a key, and its `deinit` tells the persistence it
/// ended), whose change count the test can hold: the one call of a check during which the writer holds an owner
/// whose lock is its own, widened.
private final class GatedOwner: PersistenceOwner {
    /// What the test holds instead of the owner, which it lets go.
    final class Controls: Sendable {
        let count = Locked<UInt64>(0)
        let holdsNextCount = Locked<(entered: DispatchSemaphore, proceed: DispatchSemaphore)?>(nil)
        /// The threads the owner's `deinit` ran on, once it is over.
        let endedOn = Recorder<UInt>()
    }

    let persistence: StatePersistence<Int>
    let controls: Controls
    private let registration: KeyRegistration

    init(key: String, persistence: StatePersistence<Int>, controls: Controls) {
        self.persistence = persistence
        self.controls = controls
        self.registration = KeyRegistry.shared.register(key)
    }

    /// Holds the owner for each call, as an owner whose lock is its own (a store) does.
    func changeCountReader() -> @Sendable () -> OwnerChangeCount {
        readingItself { owner in
            if let hold = owner.controls.holdsNextCount.withLock({ $0.take() }) {
                hold.entered.signal()
                _ = hold.proceed.wait(timeout: .now() + .seconds(attackPatience))
            }
            return owner.controls.count.withLock { $0 }
        }
    }

    func takeStoredValue(_ value: Int, ifUnchangedSince count: UInt64, refused: @escaping @Sendable () -> Void) {
        refused()
    }

    deinit {
        persistence.ownerDidEnd()
        controls.endedOn.append(attackThreadID())
    }
}

/// A notifying storage around ``NotifyingStorage``: the next `fingerprint` can be held (with a deadline, so that a
/// test that goes wrong fails instead of hanging the run), and `afterRead` runs on the reading thread once each
/// `fingerprint` or `load` has read.
private final class CheckedStorage: ChangeNotifyingStorage {
    let inner: NotifyingStorage
    /// The next ``fingerprint(key:)`` signals `entered`, then waits for `proceed`, at most `attackPatience`.
    let holdsNextFingerprint = Locked<(entered: DispatchSemaphore, proceed: DispatchSemaphore)?>(nil)
    private let afterRead: @Sendable () -> Void

    init(_ inner: NotifyingStorage = NotifyingStorage(InMemoryStorage().withoutNotifications), afterRead: @escaping @Sendable () -> Void = {}) {
        self.inner = inner
        self.afterRead = afterRead
    }

    var base: any ChangeDetectingStorage { inner.base }
    func notify() { inner.notify() }
    /// How many watch the key: 0 once the owner's `deinit` began (its first step stops following), which the test
    /// can read without ever holding the owner — a strong reference loaded from a weak one, on the thread that must
    /// let the held check go on, can be the last one, and end the owner there, waiting for that very check.
    var watcherCount: Int { inner.watcherCount }

    func watchChanges(of key: String, _ onChange: @escaping @Sendable () -> Void) throws(StorageError) -> StorageWatch {
        try inner.watchChanges(of: key, onChange)
    }
    func load(key: String) throws -> Data? {
        defer { afterRead() }
        return try inner.load(key: key)
    }
    func save(_ data: Data, key: String) throws { try inner.save(data, key: key) }
    func remove(key: String) throws { try inner.remove(key: key) }
    func fingerprint(key: String) throws -> StorageFingerprint {
        if let hold = holdsNextFingerprint.withLock({ $0.take() }) {
            hold.entered.signal()
            _ = hold.proceed.wait(timeout: .now() + .seconds(attackPatience))
        }
        defer { afterRead() }
        return try inner.fingerprint(key: key)
    }
    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try inner.saveReturningFingerprint(data, key: key)
    }
}

/// Marks a writer with the round of the stress test its container belongs to.
// @unchecked Sendable is safe: the only property is a `let` key that is never mutated; Dispatch uses a
// `DispatchSpecificKey` only for its identity, from any thread, but does not mark it `Sendable`.
private final class RoundTag: @unchecked Sendable {
    let key = DispatchSpecificKey<Int>()
}

/// The outside-change check (on the persistence's writer) holds its owner only to read its change count (a
/// container's is read through its link, without the container), and the applier reads the owner again when it runs:
/// an owner let go during a check ends on the thread that let it go, where its `deinit` writes what is pending and
/// frees its key. The owner is let go at each point of a check: during the storage's reads, between the check and the
/// applier, during `takeStoredValue`, while its count is read, while it is busy; containers and stores; and many
/// threads making, following and letting go containers of one key while another "process" writes it. Every wait for a
/// signal happens on threads of the test's own, never on the cooperative pool: while a writer is held by a test gate,
/// other suites' `StatehouseLifecycle.flushPendingWrites()` wait for it on pool threads.
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
        let key = "attack.ownerDuringCheck.reads.\(UUID().uuidString)"
        let holder = Locked<StateContainer<Int>?>(followedContainer(key, on: storage))
        let persistence = try #require(holder.withLock { $0?.persistence } as? StatePersistence<Int>)
        await drained(persistence)
        holder.withLock { $0?.modify(5) }  // pending: the clock never ticks

        let (entered, proceed) = holdNextCheck(storage)
        let outcome = await offThePool { () -> (endedWhileHeld: Bool, after: AfterLetGo?)? in
            guard entered.wait(timeout: .now() + .seconds(attackPatience)) == .success else {
                storage.holdsNextFingerprint.withLock { $0 = nil }
                return nil
            }
            storage.notify()  // a second check, queued behind the held one
            let after = Locked<AfterLetGo?>(nil)
            let done = DispatchSemaphore(value: 0)
            let elsewhere = DispatchSemaphore(value: 0)
            let elsewhereDone = DispatchSemaphore(value: 0)
            Thread {
                _ = elsewhere.wait(timeout: .now() + .seconds(attackPatience))
                let reports = duplicateKeyReports(of: key) { makeAndLetGoAfterItsFirstCheck(key, on: storage) }
                after.withLock { $0?.duplicatesElsewhere = reports }
                elsewhereDone.signal()
            }.start()
            Thread {
                _ = holder.withLock { $0.take() }
                let found = AfterLetGo(
                    stored: stored(storage, key), keyWasLive: KeyRegistry.shared.isLive(key),
                    duplicatesHere: duplicateKeyReports(of: key) { makeAndLetGoAfterItsFirstCheck(key, on: storage) }
                )
                after.withLock { $0 = found }
                elsewhere.signal()
                done.signal()
            }.start()
            // Its `deinit` started (it stopped following) while the check is still held. Not read through
            // `container`: see `CheckedStorage.watcherCount`.
            let endedWhileHeld = attackSpin(timeout: .seconds(attackPatience)) { storage.watcherCount == 0 }
            proceed.signal()
            guard done.wait(timeout: .now() + .seconds(attackPatience)) == .success,
                elsewhereDone.wait(timeout: .now() + .seconds(attackPatience)) == .success
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
        let key = "attack.ownerDuringCheck.storeReads.\(UUID().uuidString)"
        let holder = Locked<Store<Int, Int>?>(followedStore(key, on: storage))
        let persistence = try #require(holder.withLock { $0?.persistence } as? StatePersistence<Int>)
        await drained(persistence)
        holder.withLock { $0?.dispatch(5) }  // pending: the clock never ticks

        let (entered, proceed) = holdNextCheck(storage)
        let outcome = await offThePool { () -> (endedWhileHeld: Bool, stored: Int??)? in
            guard entered.wait(timeout: .now() + .seconds(attackPatience)) == .success else {
                storage.holdsNextFingerprint.withLock { $0 = nil }
                return nil
            }
            let found = Locked<Int??>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = holder.withLock { $0.take() }
                found.withLock { $0 = .some(stored(storage, key)) }
                done.signal()
            }.start()
            let endedWhileHeld = attackSpin(timeout: .seconds(attackPatience)) { storage.watcherCount == 0 }
            proceed.signal()
            guard done.wait(timeout: .now() + .seconds(attackPatience)) == .success else {
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
        let key = "attack.ownerDuringCheck.applier.\(UUID().uuidString)"
        let holder = Locked<StateContainer<Int>?>(followedContainer(key, on: storage, writes: .writeThrough))
        let container = AttackWeak(holder.withLock { $0 })
        let persistence = try #require(holder.withLock { $0?.persistence } as? StatePersistence<Int>)
        await drained(persistence)
        let heard = Recorder<Int>()
        let token = try #require(holder.withLock { $0?.observe { heard.append($0) } })

        let applierHeld = DispatchSemaphore(value: 0)
        let applierGoes = DispatchSemaphore(value: 0)
        persistence.applier.async {
            applierHeld.signal()
            _ = applierGoes.wait(timeout: .now() + .seconds(attackPatience))
        }
        try storage.base.save(Data("41".utf8), key: key)  // another process
        storage.notify()
        let outcome = await offThePool { () -> (endedAtOnce: Bool, keyWasLive: Bool)? in
            defer { applierGoes.signal() }
            guard applierHeld.wait(timeout: .now() + .seconds(attackPatience)) == .success else { return nil }
            persistence.writer.sync {}  // the check read 41 and queued its hand-over behind the held applier
            let found = Locked<(endedAtOnce: Bool, keyWasLive: Bool)?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = holder.withLock { $0.take() }
                found.withLock { $0 = (container.object == nil, KeyRegistry.shared.isLive(key)) }
                done.signal()
            }.start()
            guard done.wait(timeout: .now() + .seconds(attackPatience)) == .success else { return nil }
            applierGoes.signal()
            persistence.applier.sync {}  // the hand-over ran
            return found.withLock { $0 }
        }
        let seen = try #require(outcome, "the check or the let-go did not happen")
        #expect(seen.endedAtOnce, "the queued hand-over kept the container alive after its last reference went")
        #expect(!seen.keyWasLive)
        #expect(!heard.elements.contains(41), "the outside value was applied to a container already let go")
        #expect(stored(storage, key) == 41)
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
        let key = "attack.ownerDuringCheck.count.\(UUID().uuidString)"
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
            guard entered.wait(timeout: .now() + .seconds(attackPatience)) == .success else {
                controls.holdsNextCount.withLock { $0 = nil }
                return nil
            }
            let letGoOn = Locked<(thread: UInt, keyWasLive: Bool, duplicates: Int)?>(nil)
            let done = DispatchSemaphore(value: 0)
            Thread {
                _ = holder.withLock { $0.take() }
                let keyWasLive = KeyRegistry.shared.isLive(key)
                let duplicates = duplicateKeyReports(of: key) { withExtendedLifetime(StateContainer(0, key: key)) {} }
                letGoOn.withLock { $0 = (attackThreadID(), keyWasLive, duplicates) }
                done.signal()
            }.start()
            // The writer holds the owner for the call: letting it go elsewhere returns at once.
            guard done.wait(timeout: .now() + .seconds(attackPatience)) == .success else { return nil }
            proceed.signal()
            let ended = attackSpin(timeout: .seconds(attackPatience)) { endedOn.count == 1 }
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
        #expect(stored(storage, key) == 5, "the owner ended on the writer without writing its pending change")
        #expect(!KeyRegistry.shared.isLive(key))
    }

    /// A store kept busy (its reducer blocks, its lock held) when a check comes: the check asks again later. Let go
    /// meanwhile, it ends on the thread that finishes the action, writing its state, which no older outside value
    /// replaces; a check that then finds no store does not take it for a busy one.
    @Test func aBusyStoreLetGoEndsWhereItsActionEndsAndKeepsItsState() async throws {
        let storage = CheckedStorage()
        let key = "attack.ownerDuringCheck.busyStore.\(UUID().uuidString)"
        let clock = ManualClock()
        let inReducer = DispatchSemaphore(value: 0)
        let leaveReducer = DispatchSemaphore(value: 0)
        let holder = Locked<Store<Int, Int>?>(
            followedStore(key, on: storage, clock: clock) { state, action in
                if action == 7 {
                    inReducer.signal()
                    _ = leaveReducer.wait(timeout: .now() + .seconds(attackPatience))
                }
                state = action
            }
        )
        let store = AttackWeak(holder.withLock { $0 })
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
        #expect(await attackWait(for: inReducer))
        storage.notify()
        // The check found the store busy and asks again after a back-off, on the clock.
        #expect(await eventually { clock.sleepers() == 2 })
        await offThePool { _ = holder.withLock { $0.take() } }  // not the last reference: the action holds the store
        #expect(store.object != nil)
        leaveReducer.signal()
        #expect(await attackWait(for: actionDone))
        #expect(store.object == nil, "the store did not end where its action ended")
        #expect(stored(storage, key) == 7, "the store's state was lost, or an older outside value replaced it")

        // A check now finds no owner: one busy check so far (the next back-off 2 ms); a second would make it 4.
        persistence.requestCheck()
        await drained(persistence)
        #expect(persistence.machine.withLock { $0.ownerWasBusy() } == .milliseconds(2))
        clock.advance(by: .seconds(7200))  // the retry finds no owner; nothing is left asleep
        #expect(stored(storage, key) == 7)
    }

    /// A container let go while the applier is inside `takeStoredValue` (a listener of the outside value runs): the
    /// call holds it, so the thread that let it go returns at once (having made a change: written through, it waits
    /// for the writer, which must not be where the listener runs); it ends on the applier once the call returns,
    /// writing the change made meanwhile if it is still pending, and frees its key; nothing deadlocks.
    @Test(arguments: [false, true])
    func aContainerLetGoDuringTakeStoredValueEndsOnTheApplierAndWritesItsChange(writeThrough: Bool) async throws {
        let storage = CheckedStorage()
        let key = "attack.ownerDuringCheck.take.\(UUID().uuidString)"
        let holder = Locked<StateContainer<Int>?>(
            followedContainer(key, on: storage, writes: writeThrough ? .writeThrough : .coalesced)
        )
        let container = AttackWeak(holder.withLock { $0 })
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
                    _ = leaveListener.wait(timeout: .now() + .seconds(attackPatience))
                }
            }
        )
        try storage.base.save(Data("41".utf8), key: key)  // another process
        storage.notify()
        let outcome = await offThePool {
            () -> (letGoReturned: Bool, heldForTheCall: Bool, ended: Bool)? in
            defer { leaveListener.signal() }
            guard inListener.wait(timeout: .now() + .seconds(attackPatience)) == .success else { return nil }
            let done = DispatchSemaphore(value: 0)
            Thread {
                holder.withLock { $0?.modify(6) }  // its listeners' call handed to the applier's delivery
                _ = holder.withLock { $0.take() }
                done.signal()
            }.start()
            let letGoReturned = done.wait(timeout: .now() + .seconds(attackPatience)) == .success
            let heldForTheCall = container.object != nil
            leaveListener.signal()
            let ended = attackSpin(timeout: .seconds(attackPatience)) {
                container.object == nil && !KeyRegistry.shared.isLive(key)
            }
            return (letGoReturned, heldForTheCall, ended)
        }
        let seen = try #require(outcome, "the outside value never reached the listener")
        #expect(seen.letGoReturned, "letting the container go waited for the applier's call")
        #expect(seen.heldForTheCall, "the applier did not hold the container for its call")
        #expect(seen.ended, "the container did not end once the applier's call returned")
        #expect(stored(storage, key) == 6, "the change made during the call was not written when the container ended")
        #expect(heard.elements.first == 41)
        token.cancel()
    }

    /// Threads take turns making, following and letting go containers of one key while another "process" writes it
    /// and notifies without pause. In most rounds the container has a change pending when it is let go (so no
    /// outside value is handed to it, and nothing may hold it but its round and, for one call, its writer); in the
    /// others it waits until it took an outside value. After each let-go: the key frees, a pending change is
    /// stored, a container that changed nothing wrote nothing, no check was reading the storage while holding a
    /// container already let go, and the next container of the key is no duplicate.
    @Test func manyThreadsMakeFollowAndLetGoContainersOfOneKeyWhileAnotherProcessWritesIt() async throws {
        let key = "attack.ownerDuringCheck.storm.\(UUID().uuidString)"
        let tag = RoundTag()
        /// Each round's container, whether its thread let it go, and whether it had a change pending.
        let rounds = Locked<[Int: (container: AttackWeak<StateContainer<Int>>, letGo: Bool, pending: Bool)]>([:])
        let heldAcrossARead = Recorder<Int>()
        let storage = CheckedStorage {
            guard let round = DispatchQueue.getSpecific(key: tag.key) else { return }
            // A window, not a wait: a check that holds its owner across the read still holds it here.
            for _ in 0..<8 { sched_yield() }
            // Read before the weak reference: once the round's thread let its container go, only another holder
            // (here: a check holding it across the read) keeps it alive.
            guard let entry = rounds.withLock({ $0[round] }), entry.letGo, entry.pending else { return }
            if entry.container.object != nil { heldAcrossARead.append(round) }
        }
        let roundCount = 150
        let threads = 3
        /// The outside process's writes happen under this lock, the last value in it.
        let outside = Locked<Int>(0)
        let stop = AttackFlag()
        let outsideDone = DispatchSemaphore(value: 0)
        Thread {
            var write = 0
            while !stop.isSet {
                write += 1
                outside.withLock { last in
                    last = 1_000_000 + write
                    try? storage.base.save(Data("\(last)".utf8), key: key)
                }
                storage.notify()
                for _ in 0..<(write % 16) { sched_yield() }
            }
            outsideDone.signal()
        }.start()

        let baton = DispatchSemaphore(value: 1)
        let next = AttackCounter()
        let duplicates = AttackCounter()
        let neverFreed = Recorder<Int>()
        let lost = Recorder<String>()
        let neverTook = Recorder<Int>()
        /// Let-goes after which the key was still taken, in rounds with a change pending and in the others.
        let lateFrees = (pending: AttackCounter(), taking: AttackCounter())
        await onNewThreads(threads) { _ in
            while true {
                guard baton.wait(timeout: .now() + .seconds(attackPatience * 2)) == .success else {
                    neverFreed.append(-1)
                    return
                }
                defer { baton.signal() }
                let round = next.increment() - 1
                guard round < roundCount else { return }
                let pending = round % 3 != 2
                let local = -(round + 1)
                let clock = ManualClock()
                var container: StateContainer<Int>?
                // No outside write between the load and the local change: in a pending round the container never
                // has an outside value to take.
                outside.withLock { _ in
                    let reports = duplicateKeyReports(of: key) { container = followedContainer(key, on: storage, clock: clock) }
                    for _ in 0..<reports { duplicates.increment() }
                    if pending { container?.modify(local) }
                }
                // No strong reference but `container`, which the round lets go.
                guard let persistence = container?.persistence as? StatePersistence<Int> else {
                    lost.append("round \(round): no persisted container")
                    return
                }
                persistence.writer.setSpecific(key: tag.key, value: round)
                rounds.withLock { $0[round] = (AttackWeak(container), false, pending) }
                if !pending,
                    !attackSpin(timeout: .seconds(attackPatience), until: { (container?.value ?? 0) >= 1_000_000 })
                {
                    neverTook.append(round)
                }
                for _ in 0..<(round * 7 % 40) { sched_yield() }
                let letGo = {
                    container = nil
                    rounds.withLock { $0[round]?.letGo = true }
                    if KeyRegistry.shared.isLive(key) { (pending ? lateFrees.pending : lateFrees.taking).increment() }
                    if !attackSpin(timeout: .seconds(attackPatience), until: { !KeyRegistry.shared.isLive(key) }) {
                        neverFreed.append(round)
                    }
                }
                if pending {
                    // No outside write from the let-go to the look at the storage: it must hold the local change.
                    outside.withLock { _ in
                        letGo()
                        let found = stored(storage, key)
                        if found != local { lost.append("round \(round): stored \(String(describing: found)), not \(local)") }
                    }
                } else {
                    letGo()
                    // Changed nothing: wrote nothing (only the outside process's values, from 1,000,001).
                    let found = stored(storage, key)
                    if (found ?? 0) < 1_000_000 {
                        lost.append("round \(round): stored \(String(describing: found)) after taking outside values")
                    }
                }
                clock.advance(by: .seconds(7200))  // its coalesced write's timer finds nothing; nothing stays asleep
            }
        }
        stop.set()
        #expect(await attackWait(for: outsideDone))
        #expect(next.value >= roundCount, "a round did not finish")
        #expect(heldAcrossARead.elements.isEmpty, "checks held containers let go across reads in rounds \(heldAcrossARead.elements)")
        #expect(lost.elements.isEmpty, "\(lost.elements)")
        #expect(neverFreed.elements.isEmpty, "keys never freed in rounds \(neverFreed.elements)")
        #expect(neverTook.elements.isEmpty, "no outside value taken in rounds \(neverTook.elements)")
        #expect(duplicates.value == 0)
        if ProcessInfo.processInfo.environment["STATEHOUSE_OWNER_DURING_CHECK_VERBOSE"] != nil {
            print("""
                Owners let go during checks: the key still taken after \(lateFrees.pending.value) let-goes with a \
                change pending, \(lateFrees.taking.value) others, of \(roundCount)
                """)
        }
    }

    /// A persisted container, following its storage's notifications while another thread notifies without pause,
    /// changed then let go on this thread: its change is stored once the let-go returns, its key is free, and a new
    /// container of the key made right after is no duplicate (the count is read through the link, so no check
    /// holds the container). A count reader that held the container would fail here.
    @Test func persistedContainerLetGoWhileChecksReadItsCount() async {
        let outcome = await offThePool { () -> [String] in
            var problems: [String] = []
            let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
            let stop = Atomic<Bool>(false)
            let notifier = onAThreadOfItsOwn {
                while !stop.load(ordering: .relaxed) { storage.notify() }
            }
            for round in 0..<200 {
                let key = "attack.cancelstate.letgo.\(round).\(UUID().uuidString)"
                let reported = Recorder<StatehouseDiagnostic>()
                StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
                    var container: StateContainer<Int>? = StateContainer(
                        0, key: key, storage: storage, codec: .json, writes: .coalesced,
                        externalChanges: .watch(safetyNet: .milliseconds(1))
                    )
                    container!.modify(round + 1)
                    container = nil
                    let stored = (try? storage.base.load(key: key)).flatMap { String(data: $0, encoding: .utf8) }
                    if stored != "\(round + 1)" { problems.append("round \(round): stored \(stored ?? "nil")") }
                    if KeyRegistry.shared.isLive(key) { problems.append("round \(round): key still live") }
                    let again = StateContainer(0, key: key)
                    withExtendedLifetime(again) {}
                }
                let dups = reported.elements.filter { $0.kind == .duplicateKey && $0.key == key }.count
                if dups > 0 { problems.append("round \(round): \(dups) duplicate-key reports") }
            }
            stop.store(true, ordering: .relaxed)
            _ = notifier.wait(timeout: .now() + .seconds(attackPatience))
            return problems
        }
        #expect(outcome.isEmpty, "\(outcome.prefix(10))")
    }
}
