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

// Storages and owners that hold a check of outside changes at a chosen point, to let the owner go there.

/// Holds the next check of `storage` inside its fingerprint read (see `CheckedStorage.holdsNextFingerprint`), and
/// asks for one.
func holdNextCheck(_ storage: CheckedStorage) -> (entered: DispatchSemaphore, proceed: DispatchSemaphore) {
    let hold = (entered: DispatchSemaphore(value: 0), proceed: DispatchSemaphore(value: 0))
    storage.holdsNextFingerprint.withLock { $0 = hold }
    storage.notify()
    return hold
}

/// A container of `key` on `storage` that follows its notifications, on a clock that never ticks unless the test
/// advances it: a coalesced change stays pending until the container ends or is flushed, and no poll checks.
func followedContainer(
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
func followedStore(
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
func drained(_ persistence: StatePersistence<Int>) async {
    await offThePool { persistence.writer.sync {} }
}

/// Makes a followed container of `key` and lets it go once its first check is over: it then ends here. (Let go at
/// once, it could end on its writer, where that check may be asking for its change count — the one moment a check
/// holds an owner — and a container of the key made next could be reported a duplicate.)
func makeAndLetGoAfterItsFirstCheck(_ key: String, on storage: some ChangeNotifyingStorage) {
    let container = followedContainer(key, on: storage)
    (container.persistence as? StatePersistence<Int>)?.writer.sync {}
    withExtendedLifetime(container) {}
}

/// How many duplicate-key reports about `key` making things in `body` caused (on this thread).
func duplicateKeyReports(of key: String, _ body: () -> Void) -> Int {
    let reported = Recorder<StatehouseDiagnostic>()
    StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) { body() }
    return reported.elements.filter { $0.kind == .duplicateKey && $0.key == key }.count
}

func storedValue(_ storage: CheckedStorage, _ key: String) -> Int? {
    (try? storage.base.load(key: key)).flatMap { String(data: $0, encoding: .utf8) }.flatMap { Int($0) }
}

/// An owner of its own (as a container or store is: it frees a key, and its `deinit` tells the persistence it
/// ended), whose change count the test can hold: the one call of a check during which the writer holds an owner
/// whose lock is its own, widened.
final class GatedOwner: PersistenceOwner {
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
                _ = hold.proceed.wait(timeout: .now() + .seconds(signalPatience))
            }
            return owner.controls.count.withLock { $0 }
        }
    }

    func takeStoredValue(_ value: Int, ifUnchangedSince count: UInt64, refused: @escaping @Sendable () -> Void) {
        refused()
    }

    deinit {
        persistence.ownerDidEnd()
        controls.endedOn.append(currentThreadID())
    }
}

/// A notifying storage around ``NotifyingStorage``: the next `fingerprint` can be held (with a deadline, so that a
/// test that goes wrong fails instead of hanging the run), and `afterRead` runs on the reading thread once each
/// `fingerprint` or `load` has read.
final class CheckedStorage: ChangeNotifyingStorage {
    let inner: NotifyingStorage
    /// The next ``fingerprint(key:)`` signals `entered`, then waits for `proceed`, at most `signalPatience`.
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
            _ = hold.proceed.wait(timeout: .now() + .seconds(signalPatience))
        }
        defer { afterRead() }
        return try inner.fingerprint(key: key)
    }
    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try inner.saveReturningFingerprint(data, key: key)
    }
}
