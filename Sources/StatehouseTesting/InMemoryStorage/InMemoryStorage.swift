import Dispatch
import Foundation
import Statehouse

/// A storage in memory for tests: transactional, change-notifying, exact, and able to fail, stall or be changed from
/// outside on cue, on a clock the test controls.
///
/// It keeps the promises of `TransactionalStorage` and `ChangeNotifyingStorage` as a database would, without the
/// database: a transaction runs under the storage's lock, every change gets a fingerprint of its own (so a
/// container never takes another writer's save for its own), and every change of a key tells its watchers. On top,
/// a test can
///
/// - make the next calls fail, stall or run code of its own: ``inject(_:into:_:keys:)``;
/// - change a key as another process would, telling the watchers: ``changeOutside(key:to:)``;
/// - count the calls, and see when and by whom each key last changed: ``callCount(of:)``, ``lastChange(of:)``.
///
/// ```swift
/// @Test func aFailedSaveIsReportedByFlush() throws {
///     let storage = InMemoryStorage()
///     let count = StateContainer(0, key: "count", storage: storage)
///     storage.inject(.fail(), into: .save)
///     count.modify(1)
///     #expect(throws: StorageError.self) { try count.flush() }
/// }
/// ```
///
/// Delays wait on `clock`: give it a `ManualClock` to decide when a stalled call goes on. Instances share nothing:
/// to play two processes on one key, use one instance and ``changeOutside(key:to:)``.
public final class InMemoryStorage<C: Clock<Duration>>: TransactionalStorage, ChangeNotifyingStorage, Sendable {
    typealias State = InMemoryStorageState<C.Instant>

    private let state = Locked(State())
    private let clock: C

    /// - Parameter clock: What ``InMemoryStorageFault/delay(_:)`` waits on, and what ``lastChange(of:)`` reads.
    public init(clock: C) {
        self.clock = clock
    }

    // MARK: StateStorage

    public func load(key: String) throws -> Data? {
        try perform(.load, key: key) { state, _ in (state.data(for: key), []) }
    }

    public func save(_ data: Data, key: String) throws {
        _ = try saveReturningFingerprint(data, key: key)
    }

    public func remove(key: String) throws {
        _ = try perform(.remove, key: key) { state, now in state.store(nil, under: key, at: now, outside: false) }
    }

    // MARK: ChangeDetectingStorage

    public func fingerprint(key: String) throws -> StorageFingerprint {
        try perform(.fingerprint, key: key) { state, _ in (state.fingerprint(of: key), []) }
    }

    /// Exact: the save and its fingerprint are one step, so another writer's save is never taken for this one.
    public func saveReturningFingerprint(_ data: Data, key: String) throws -> StorageFingerprint {
        try perform(.save, key: key) { state, now in state.store(data, under: key, at: now, outside: false) }
    }

    /// Exact: the data and its fingerprint are read in one step.
    public func loadWithFingerprint(key: String) throws -> (data: Data?, fingerprint: StorageFingerprint) {
        try perform(.load, key: key) { state, _ in ((state.data(for: key), state.fingerprint(of: key)), []) }
    }

    // MARK: TransactionalStorage

    /// Runs `transform` and stores its answer under the storage's lock, as a database transaction holds its write
    /// lock: `transform` must not call the storage.
    public func transact(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        switch state.withLock({ $0.beginCall(.transact, key: key) }) {
        case .fail(let error, let then)?:
            // Rolled back: the transform ran on the stored data, and its answer is dropped.
            _ = try state.withLock { try transform($0.data(for: key)) }
            then?()
            throw error ?? injectedFailure(of: .transact, key: key)
        case .run(let body)?:
            let answer = try state.withLock { try transform($0.data(for: key)) }
            body()
            let now = clock.now
            return tell(state.withLock { $0.store(answer, under: key, at: now, outside: false) })
        case .delay(let duration)?:
            wait(duration)
            return try commit(key: key, transform)
        case .failAfterCommit?:
            _ = try commit(key: key, transform)
            throw commitAnswerLost(.transact, key: key)
        case nil:
            return try commit(key: key, transform)
        }
    }

    /// `true` for the error of ``InMemoryStorageFault/failAfterCommit`` only.
    public func outcomeIsUnknown(after error: StorageError) -> Bool {
        error.cause is CommitAnswerLost
    }

    private func commit(key: String, _ transform: (Data?) throws -> Data?) throws -> StorageFingerprint {
        let now = clock.now
        return tell(try state.withLock { state in
            state.store(try transform(state.data(for: key)), under: key, at: now, outside: false)
        })
    }

    // MARK: ChangeNotifyingStorage

    /// Calls `onChange` after every change of `key`: this storage's own writes (as a file system's notifications
    /// do), ``changeOutside(key:to:)``, and ``notifyWatchers(of:)``.
    public func watchChanges(
        of key: String, _ onChange: @escaping @Sendable () -> Void
    ) throws(StorageError) -> StorageWatch {
        let id = try perform(.watch, key: key) { state, _ in (state.addWatcher(of: key, onChange), []) }
        return StorageWatch { [weak self] in self?.state.withLock { $0.removeWatcher(id, of: key) } }
    }

    // MARK: Outside changes

    /// Stores `data` under `key` (`nil` removes it) as another process would: no fault applies and no call is
    /// counted; the watchers are told.
    public func changeOutside(key: String, to data: Data?) {
        let now = clock.now
        tell(state.withLock { $0.store(data, under: key, at: now, outside: true) })
    }

    /// Replaces `key`'s data with what `transform` makes of it, as another process's transaction would.
    public func changeOutside(key: String, _ transform: (Data?) throws -> Data?) rethrows {
        let now = clock.now
        tell(try state.withLock { state in
            state.store(try transform(state.data(for: key)), under: key, at: now, outside: true)
        })
    }

    /// Tells the watchers of `key` (of every key if `nil`) that it may have changed, though it did not: a spurious
    /// notification, which followers must take calmly.
    public func notifyWatchers(of key: String? = nil) {
        for watcher in state.withLock({ $0.watchers(of: key) }) { watcher() }
    }

    // MARK: Faults

    /// Makes calls of `operations` on `keys` meet `fault`, `times` times.
    ///
    /// Faults with a count (``InMemoryStorageFaultTimes/times(_:)``) are met first, in the order they were
    /// injected; then standing ones (``InMemoryStorageFaultTimes/always``, ``InMemoryStorageFaultTimes/every(_:)``).
    /// A call meets one fault at most.
    public func inject(
        _ fault: InMemoryStorageFault,
        into operations: InMemoryStorageOperations,
        _ times: InMemoryStorageFaultTimes = .once,
        keys: InMemoryStorageKeys = .all
    ) {
        precondition(!operations.isEmpty, "A fault needs at least one operation to apply to.")
        if case .times(let count) = times { precondition(count >= 0, "A fault cannot apply \(count) times.") }
        if case .every(let period) = times { precondition(period > 0, "A fault cannot apply every \(period) calls.") }
        state.withLock { $0.inject(fault, into: operations, times, keys: keys) }
    }

    /// Removes every injected fault not yet met.
    public func removeFaults() {
        state.withLock { $0.removeFaults() }
    }

    // MARK: Looking inside

    /// The keys with data, sorted.
    public var keys: [String] {
        state.withLock { $0.keys }
    }

    /// What `key` holds, read without counting a call or meeting a fault.
    public func contents(of key: String) -> Data? {
        state.withLock { $0.data(for: key) }
    }

    /// How many calls of `operations` were made, faulty ones included.
    public func callCount(of operations: InMemoryStorageOperations) -> Int {
        state.withLock { $0.callCount(of: operations) }
    }

    /// How many calls of `operations` met an injected fault.
    public func faultCount(of operations: InMemoryStorageOperations) -> Int {
        state.withLock { $0.faultCount(of: operations) }
    }

    /// The last change of `key`: when, to what, and whether from outside; `nil` if it never changed.
    public func lastChange(of key: String) -> InMemoryStorageChange<C.Instant>? {
        state.withLock { $0.lastChange(of: key) }
    }

    /// How many watch `key` now.
    public func watcherCount(of key: String) -> Int {
        state.withLock { $0.watcherCount(of: key) }
    }

    // MARK: Calls

    /// Does `body` under the lock unless the call meets a fault that says otherwise, then tells the watchers it
    /// returns.
    private func perform<Result: Sendable>(
        _ operation: InMemoryStorageOperations,
        key: String,
        _ body: (inout State, C.Instant) -> (Result, [State.Watcher])
    ) throws(StorageError) -> Result {
        let fault = state.withLock { $0.beginCall(operation, key: key) }
        switch fault {
        case .fail(let error, let then)?:
            then?()
            throw error ?? injectedFailure(of: operation, key: key)
        case .run(let body)?:
            body()
        case .delay(let duration)?:
            wait(duration)
        case .failAfterCommit?, nil:
            break
        }
        // Read after any delay: a change is stamped when it is made.
        let now = clock.now
        let result = tell(state.withLock { body(&$0, now) })
        if case .failAfterCommit? = fault { throw commitAnswerLost(operation.storageOperation, key: key) }
        return result
    }

    /// Calls `watchers` outside the lock (a watcher may read the storage), and returns `result`.
    @discardableResult
    private func tell<Result>(_ outcome: (Result, [State.Watcher])) -> Result {
        for watcher in outcome.1 { watcher() }
        return outcome.0
    }

    /// Blocks the calling thread until `duration` has passed on the clock.
    private func wait(_ duration: Duration) {
        let done = DispatchSemaphore(value: 0)
        Task.detached { [clock] in
            try? await clock.sleep(for: duration)
            done.signal()
        }
        done.wait()
    }

    private func injectedFailure(of operation: InMemoryStorageOperations, key: String) -> StorageError {
        StorageError(
            .io, key: key, operation: operation.storageOperation,
            message: "Injected failure of \(operation.storageOperation.rawValue) on '\(key)'."
        )
    }

    private func commitAnswerLost(_ operation: StorageError.Operation, key: String) -> StorageError {
        StorageError(
            .io, key: key, operation: operation,
            message: "Injected: the answer of the \(operation.rawValue) of '\(key)' was lost; it may have landed.",
            cause: CommitAnswerLost()
        )
    }
}

extension InMemoryStorage where C == ContinuousClock {
    /// An empty storage whose delays are real time.
    public convenience init() {
        self.init(clock: ContinuousClock())
    }
}

/// The cause of the error of ``InMemoryStorageFault/failAfterCommit``.
struct CommitAnswerLost: Error {}
