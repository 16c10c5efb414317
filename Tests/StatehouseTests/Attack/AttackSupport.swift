import Dispatch
import Foundation
import Synchronization
@testable import Statehouse
import StatehouseTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Helpers of the issue 10 attack tests. Blocking happens on threads of their own (never on Swift's cooperative
// pool, which has one thread per core: blocking it would stall every other suite), and every wait has a deadline.

/// A number identifying the calling thread while it runs.
func attackThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

/// How long a test waits for a signal that is sure to come: only a starved machine makes it matter (the suites run in
/// parallel, under ThreadSanitizer too, on two cores: a task may not run for several seconds).
let attackPatience = 60

/// Waits for `count` signals of `semaphore` on a thread of its own; `false` if they did not all come in `seconds`.
func attackWait(for semaphore: DispatchSemaphore, count: Int = 1, seconds: Int = attackPatience) async -> Bool {
    await offThePool { () -> Bool in
        let deadline = DispatchTime.now() + .seconds(seconds)
        for _ in 0..<count {
            if semaphore.wait(timeout: deadline) == .timedOut { return false }
        }
        return true
    }
}

/// Waits on the calling thread, without suspending (the thread is part of the window under test), until `condition`
/// holds or `timeout` passes; returns whether it held.
@discardableResult
func attackSpin(timeout: Duration = .seconds(5), until condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    var spins = 0
    while !condition() {
        if ContinuousClock.now >= deadline { return condition() }
        spins += 1
        if spins < 100 {
            sched_yield()
        } else {
            usleep(50)
        }
    }
    return true
}

/// An in-memory storage that tells its own saves from others' exactly, and runs `transact` under the same lock as
/// every other access: a `TransactionalStorage` as SQLite or PostgreSQL would be, without their cost. The fingerprint
/// is a version number that every save, removal and transaction advances.
final class AttackMemoryStorage: TransactionalStorage {
    private struct Entries: Sendable {
        var data: [String: Data] = [:]
        var versions: [String: Int64] = [:]
        var clock: Int64 = 0

        mutating func store(_ newData: Data?, key: String) -> StorageFingerprint {
            clock += 1
            guard let newData else {
                data[key] = nil
                versions[key] = nil
                return .absent
            }
            data[key] = newData
            versions[key] = clock
            return StorageFingerprint([clock])
        }

        func fingerprint(key: String) -> StorageFingerprint {
            versions[key].map { StorageFingerprint([$0]) } ?? .absent
        }
    }

    private let entries = Locked(Entries())

    init() {}

    func load(key: String) throws -> Data? {
        entries.withLock { $0.data[key] }
    }

    func save(_ data: Data, key: String) throws {
        _ = entries.withLock { $0.store(data, key: key) }
    }

    func remove(key: String) throws {
        _ = entries.withLock { $0.store(nil, key: key) }
    }

    func fingerprint(key: String) throws -> StorageFingerprint {
        entries.withLock { $0.fingerprint(key: key) }
    }

    /// Exact (one critical section), so that another writer's save is never taken for this one.
    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        entries.withLock { $0.store(data, key: key) }
    }

    func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        try entries.withLock { state in
            let newData = try transform(state.data[key])
            return state.store(newData, key: key)
        }
    }
}

/// A change-detecting storage around another that runs a hook once, inside its next `load`: on the thread that
/// loads, after it decided to load (a persisted owner's poller, once it saw an outside change), before the data is
/// read. Only `ChangeDetectingStorage`, never transactional.
final class AttackHookedStorage: ChangeDetectingStorage {
    let base: any ChangeDetectingStorage
    private let hook = Locked<(@Sendable () -> Void)?>(nil)
    private let hookRuns = Atomic<Int>(0)

    init(_ base: any ChangeDetectingStorage) {
        self.base = base
    }

    /// Runs `body` inside the next `load`, once.
    func onNextLoad(_ body: @escaping @Sendable () -> Void) {
        hook.withLock { $0 = body }
    }

    /// How many hooks have run (and returned).
    var hookRunCount: Int {
        hookRuns.load(ordering: .sequentiallyConsistent)
    }

    private func takeHook() -> (@Sendable () -> Void)? {
        hook.withLock { slot in
            let taken = slot
            slot = nil
            return taken
        }
    }

    func load(key: String) throws -> Data? {
        if let body = takeHook() {
            body()
            hookRuns.add(1, ordering: .sequentiallyConsistent)
        }
        return try base.load(key: key)
    }

    func save(_ data: Data, key: String) throws {
        try base.save(data, key: key)
    }

    func remove(key: String) throws {
        try base.remove(key: key)
    }

    func fingerprint(key: String) throws -> StorageFingerprint {
        try base.fingerprint(key: key)
    }

    func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try base.saveReturningFingerprint(data, key: key)
    }
}

/// An in-memory storage whose saves fail while told to, and that can run a hook inside its next failing save (on
/// the thread that saves, before the failure is thrown).
final class AttackFlakyStorage: StateStorage {
    private struct Entries: Sendable {
        var data: [String: Data] = [:]
        var failing = false
        var failures = 0

        /// Stores `newData` unless failing; returns whether it failed.
        mutating func save(_ newData: Data, key: String) -> Bool {
            if failing {
                failures += 1
                return true
            }
            data[key] = newData
            return false
        }
    }

    private let entries = Locked(Entries())
    private let failureHook = Locked<(@Sendable () -> Void)?>(nil)

    init() {}

    var failing: Bool {
        get { entries.withLock { $0.failing } }
        set { entries.withLock { $0.failing = newValue } }
    }

    var failures: Int {
        entries.withLock { $0.failures }
    }

    /// Runs `body` inside the next failing save, once.
    func onNextFailure(_ body: @escaping @Sendable () -> Void) {
        failureHook.withLock { $0 = body }
    }

    private func takeFailureHook() -> (@Sendable () -> Void)? {
        failureHook.withLock { slot in
            let taken = slot
            slot = nil
            return taken
        }
    }

    func load(key: String) throws -> Data? {
        entries.withLock { $0.data[key] }
    }

    func remove(key: String) throws {
        _ = entries.withLock { $0.data.removeValue(forKey: key) }
    }

    func save(_ data: Data, key: String) throws {
        guard entries.withLock({ $0.save(data, key: key) }) else { return }
        takeFailureHook()?()
        throw StorageError(.io, key: key, message: "No space left on device (simulated).")
    }
}

/// Runs `body` on a thread of its own; the semaphore is signalled once it returned.
func onAThreadOfItsOwn(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return done
}

/// Dispatches `action` to `store`, which is busy, on a thread of its own, and returns once the action is queued:
/// the dispatch waits for it to be applied, so it cannot be made on the thread that will release the store.
/// - Returns: Signalled when the dispatch has returned.
func dispatchBehindTheBusyStore<State: Sendable, Action: Sendable>(
    _ action: Action, to store: Store<State, Action>
) -> DispatchSemaphore {
    behindTheBusyStore(store) { store.dispatch(action) }
}

/// Runs `body`, which queues work on `store` and waits for it (a dispatch, a time travel), on a thread of its own, and
/// returns once the work is queued.
/// - Returns: Signalled when `body` has returned.
func behindTheBusyStore<State: Sendable, Action: Sendable>(
    _ store: Store<State, Action>, _ body: @escaping @Sendable () -> Void
) -> DispatchSemaphore {
    let queuedBefore = store.inbox.turns.withLock { $0.queue.count }
    let returned = onAThreadOfItsOwn(body)
    _ = attackSpin(timeout: .seconds(attackPatience)) {
        store.inbox.turns.withLock { $0.queue.count } > queuedBefore
    }
    return returned
}

/// A weak reference any thread may read: it is never reassigned, and the object is `Sendable`.
final class AttackWeak<Object: AnyObject & Sendable>: Sendable {
    weak let object: Object?
    init(_ object: Object?) { self.object = object }
}

/// A value set once another thread may read it: a scoped store made after the closure that reads it.
final class AttackSlot<Value: Sendable>: Sendable {
    private let slot = Locked<Value?>(nil)

    init() {}

    var value: Value? {
        get { slot.withLock { $0 } }
        set { slot.withLock { $0 = newValue } }
    }

    func set(_ value: Value?) {
        self.value = value
    }

    /// Takes the value out under the lock and lets it go outside it: a token let go cancels, and may wait for a call
    /// that reads this slot.
    func letGo() {
        let taken = slot.withLock { $0.take() }
        withExtendedLifetime(taken) {}
    }
}

/// The listener side of "cancel() returns only once no call is running": its first call says so, waits until
/// `cancel()` has started on another thread, and then stays inside a while longer.
final class AttackCancelProbe: Sendable {
    /// Signalled when the first call starts.
    let entered = DispatchSemaphore(value: 0)
    private let calls = Atomic<Int>(0)
    private let cancelStarted = Atomic<Bool>(false)
    private let firstCallEnded = Atomic<Bool>(false)

    init() {}

    /// The listener's body.
    func call() {
        guard calls.add(1, ordering: .sequentiallyConsistent).newValue == 1 else { return }
        entered.signal()
        attackSpin { cancelStarted.load(ordering: .sequentiallyConsistent) }
        // A window, not a wait for a signal: a cancel() that does not wait for this call returns within it. On a
        // machine too slow for it, the test passes falsely; with a correct cancel() it cannot fail.
        usleep(50_000)
        firstCallEnded.store(true, ordering: .sequentiallyConsistent)
    }

    /// Runs `cancel` on a new thread; returns whether the first call had ended when `cancel` returned.
    func cancel(_ cancel: @escaping @Sendable () -> Void) async -> Bool {
        await offThePool { () -> Bool in
            self.cancelStarted.store(true, ordering: .sequentiallyConsistent)
            cancel()
            return self.firstCallEnded.load(ordering: .sequentiallyConsistent)
        }
    }
}

/// A counter to share between threads and closures (an `Atomic` in a class, so that closures capture a reference).
final class AttackCounter: Sendable {
    private let atomic: Atomic<Int>

    init(_ value: Int = 0) {
        atomic = Atomic(value)
    }

    /// Adds 1; returns the new value.
    @discardableResult
    func increment() -> Int {
        atomic.add(1, ordering: .sequentiallyConsistent).newValue
    }

    var value: Int {
        atomic.load(ordering: .sequentiallyConsistent)
    }
}

/// A flag to share between threads and closures.
final class AttackFlag: Sendable {
    private let atomic = Atomic<Bool>(false)

    init() {}

    /// Sets the flag; returns whether it was set already.
    @discardableResult
    func set() -> Bool {
        atomic.exchange(true, ordering: .sequentiallyConsistent)
    }

    var isSet: Bool {
        atomic.load(ordering: .sequentiallyConsistent)
    }
}

/// Which thread a test calls from, for closures that must tell its calls from other threads' (0: none).
final class AttackCallerThread: Sendable {
    private let atomic = Atomic<UInt>(0)

    init() {}

    /// Makes the calling thread the caller until ``clear()``.
    func setToCurrent() {
        atomic.store(attackThreadID(), ordering: .sequentiallyConsistent)
    }

    func clear() {
        atomic.store(0, ordering: .sequentiallyConsistent)
    }

    /// Whether the calling thread is the caller.
    var isCurrent: Bool {
        atomic.load(ordering: .sequentiallyConsistent) == attackThreadID()
    }
}

/// A store whose subscriber of `holds` blocks on the processor when that part changes, until `release` is signalled
/// (or the attack's patience runs out): the store is busy without its state lock held (a reducer that blocked would
/// hold it, and `cancel()` rightly waits for it).
func attackStoreWithABlockingSubscriber<State: Sendable, Action: Sendable>(
    _ initialState: State,
    reducer: @escaping @Sendable (inout State, Action) -> Void,
    holds: any KeyPath<State, Int> & Sendable
) -> (store: Store<State, Action>, blocker: SubscriptionToken, entered: DispatchSemaphore, release: DispatchSemaphore) {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let store = Store(initialState: initialState, reducer: reducer)
    let blocker = store.subscribe(holds, initial: false) { _ in
        entered.signal()
        _ = release.wait(timeout: .now() + .seconds(attackPatience))
    }
    return (store, blocker, entered, release)
}

/// A listener of `container` whose call for the value 1 signals `entered`, then waits for `release`: a round held
/// inside its first listener, so that a test can act while the round still has entries ahead.
func attackListenerHeldAtOne(
    _ container: StateContainer<Int>
) -> (token: SubscriptionToken, entered: DispatchSemaphore, release: DispatchSemaphore) {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let token = container.observe { value in
        guard value == 1 else { return }
        entered.signal()
        _ = release.wait(timeout: .now() + .seconds(attackPatience))
    }
    return (token, entered, release)
}

/// A listener call held inside until `letOut()`: `entered` is signalled once it is inside, `isInside` says whether
/// it still is.
final class AttackHeldCall: Sendable {
    let entered = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let inside = Atomic<Bool>(false)

    func call() {
        inside.store(true, ordering: .sequentiallyConsistent)
        entered.signal()
        _ = release.wait(timeout: .now() + .seconds(attackPatience))
        inside.store(false, ordering: .sequentiallyConsistent)
    }

    var isInside: Bool { inside.load(ordering: .sequentiallyConsistent) }

    func letOut() { release.signal() }
}
