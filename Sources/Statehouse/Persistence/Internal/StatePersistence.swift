import Dispatch
import Foundation

/// Writes a container's value (or a store's state) to its storage, as its ``WritePolicy`` says, follows changes
/// others make, and reports failures. The decisions are ``PersistenceMachine``'s; this class holds it under a lock,
/// does the I/O on a serial *writer* queue, and keeps time with an injected clock.
///
/// The writer encodes the snapshot current *when it writes*, so a burst of changes costs one encoding and one
/// write; it never takes the owner's lock, so a flush at exit works even while this thread is inside a reducer or
/// an `update` body. A write that fails leaves the change pending: the next change, `flush()`, deallocation or exit
/// tries again.
///
/// Outcomes are published through `lastError` off the writer queue (its listeners run synchronously and may flush,
/// which waits for the writer).
final class StatePersistence<Value: Sendable>: Persisting, StatePersistenceFlushing {
    typealias Snapshot = PersistedSnapshot<Value>

    let key: String
    let lastError: StateContainer<StorageError?>
    let updatesInTransactions: Bool

    let storage: any StateStorage
    /// `storage`, if it can tell its own writes from others'.
    let changeDetecting: (any ChangeDetectingStorage)?
    /// `storage`, if `update` runs as a transaction on it.
    private let transactional: (any TransactionalStorage)?
    let codec: StateCodec<Value>
    let externalChanges: ExternalChanges
    let clock: any Clock<Duration>
    let machine: Locked<PersistenceMachine<Value>>
    /// Serializes the I/O, so that an older value never lands after a newer one.
    let writer: DispatchQueue
    /// Hands outside values to the owner in order, off `writer` (its listeners may flush).
    let applier: DispatchQueue
    let following = Locked<Following?>(nil)
    /// The outcome of the writer's last write (a call that found nothing to write is not one). `flush()` publishes
    /// it before it returns, so that ``lastError`` then tells how the last write went, whoever made it: a window's
    /// is reported later, off the writer queue; ``flushAtExit()``'s (`StatehouseLifecycle.flushPendingWrites()`)
    /// never; another flush's, running at the same moment, perhaps not yet. (Publishing one again is harmless: an
    /// outcome's number is published once.)
    private let lastWriteOutcome = Locked<Outcome?>(nil)

    /// The owner whose outside changes are followed, and what looks for them.
    struct Following: Sendable {
        weak var owner: (any PersistenceOwner<Value>)?
        /// The owner's ``PersistenceOwner/changeCountReader()``.
        let readChangeCount: @Sendable () -> OwnerChangeCount
        /// The polls (the safety net, when watching).
        var checks: Task<Void, Never>?
        /// The storage's notifications, when watching.
        var watch: StorageWatch?
    }

    /// Loads `key` from `storage` and makes the persistence that saves the changes of the owner made with it.
    ///
    /// - Returns: The value the owner starts from, and its persistence; the owner calls ``start(owner:)`` once it
    ///   exists.
    static func load(
        key: String,
        storage: some StateStorage,
        default defaultValue: Value,
        codec: StateCodec<Value>,
        writes: WritePolicy,
        externalChanges: ExternalChanges,
        clock: any Clock<Duration>
    ) -> (value: Value, persistence: StatePersistence) {
        let loaded = LoadedValue(key: key, storage: storage, default: defaultValue, codec: codec)
        let persistence = StatePersistence(
            key: key, storage: storage, codec: codec, clock: clock, externalChanges: externalChanges,
            machine: PersistenceMachine(initial: loaded.value, policy: writes, canWrite: loaded.canWrite),
            error: loaded.error
        )
        return (loaded.value, persistence)
    }

    private init(
        key: String,
        storage: any StateStorage,
        codec: StateCodec<Value>,
        clock: any Clock<Duration>,
        externalChanges: ExternalChanges,
        machine: PersistenceMachine<Value>,
        error: StorageError?
    ) {
        self.key = key
        self.storage = storage
        self.changeDetecting = storage as? any ChangeDetectingStorage
        self.transactional = storage as? any TransactionalStorage
        self.updatesInTransactions = transactional != nil && machine.canWrite
        self.codec = codec
        self.clock = clock
        self.externalChanges = externalChanges
        self.machine = Locked(machine)
        self.lastError = StateContainer(error, key: KeyRegistry.shared.uniqueKey(prefix: "\(key).storageError"))
        self.writer = DispatchQueue(label: "Statehouse.persistence.\(key)")
        self.applier = DispatchQueue(label: "Statehouse.persistence.\(key).outside")
        writer.setSpecific(key: writerKey, value: ObjectIdentifier(self))
    }

    /// Registers for the flush at exit and, if asked, follows outside changes for `owner`. Called once, by the
    /// owner's initializer: the owner can only be referred to once it exists.
    func start(owner: some PersistenceOwner<Value>) {
        PendingWrites.shared.register(self)
        startFollowing(owner)
    }

    func hasPendingChange(ownerCount count: UInt64) -> Bool {
        machine.withLock { $0.hasPendingChange(ownerCount: count) }
    }

    // MARK: Changes

    func changed(_ value: Value, count: UInt64) {
        let (afterChange, _) = machine.withLock { machine in
            recordingOutsideTheLock(&machine) { $0.changed(Snapshot(value: value, count: count)) }
        }
        switch afterChange {
        case .nothing:
            break
        case .writeNow:
            report(writer.sync { write(machine.withLock { $0.nextWrite() }) })
        case .schedule(let window):
            Task.detached { [weak self, clock] in
                try? await clock.sleep(for: window)
                guard let self else { return }
                writer.async {
                    let outcome = self.write(self.machine.withLock { $0.scheduledWriteIsDue() })
                    DispatchQueue.global().async { self.report(outcome) }
                }
            }
        }
    }

    func tookStoredValue(_ value: Value, count: UInt64) {
        _ = machine.withLock { machine in
            recordingOutsideTheLock(&machine) { $0.tookStoredValue(Snapshot(value: value, count: count)) }
        }
    }

    /// Runs `record`, which may replace the machine's latest snapshot, and returns its result with that snapshot, for
    /// the caller to let go once it has released the machine's lock.
    ///
    /// The snapshot may hold the last reference to the value, and the value the last reference to a token of the
    /// container: its cancellation may wait for a listener's call in progress, and that call may be changing the
    /// container, which takes this lock (a plain `update` on a persisted container hung so; found in session 18's
    /// review).
    private func recordingOutsideTheLock<Result>(
        _ machine: inout PersistenceMachine<Value>, _ record: (inout PersistenceMachine<Value>) -> Result
    ) -> (Result, Snapshot) {
        let replaced = machine.latest
        return (record(&machine), replaced)
    }

    // MARK: Writes

    /// What a write attempt or a check did; `number` orders the outcomes.
    enum Outcome: Sendable {
        case nothingToWrite
        case written(number: UInt64)
        case failed(StorageError, number: UInt64)
        /// A check for an outside change failed.
        case checkFailed(StorageError, number: UInt64)
        /// A check read the key: the failures checks reported before it no longer hold.
        case withdrawn(number: UInt64)
    }

    /// Runs on `writer`; publishes nothing itself (see ``report(_:)``), but keeps the outcome for ``flush()``.
    private func write(_ decision: PersistenceMachine<Value>.Write) -> Outcome {
        let outcome = attempt(decision)
        if case .nothingToWrite = outcome { return outcome }
        lastWriteOutcome.withLock { $0 = outcome }
        return outcome
    }

    private func attempt(_ decision: PersistenceMachine<Value>.Write) -> Outcome {
        switch decision {
        case .nothing:
            return .nothingToWrite
        case .refuse(let number):
            return .failed(lastError.value ?? StorageError(
                .io, key: key, operation: .save,
                message: "Not writing \(String(reflecting: key)): its stored data could not be read."
            ), number: number)
        case .keepAsideFirst(let snapshot, let number):
            if let held = keepUnkeptOutsideDataAside() { return .failed(held, number: number) }
            machine.withLock { $0.outsideDataIsSafe() }
            return store(snapshot, number: number)
        case .write(let snapshot, let number):
            if let held = keepUnseenOutsideDataAside() { return .failed(held, number: number) }
            return store(snapshot, number: number)
        }
    }

    /// Runs on `writer`: writes `snapshot`, whose outcome is numbered `number`.
    private func store(_ snapshot: Snapshot, number: UInt64) -> Outcome {
        do {
            let written = try store(try encoded(snapshot.value))
            machine.withLock { $0.wrote(snapshot, fingerprint: written) }
            return .written(number: number)
        } catch {
            return .failed(error, number: number)
        }
    }

    /// Saves `data` (`nil`: removes the key); returns the fingerprint of exactly this write if the storage can tell.
    private func store(_ data: Data?) throws(StorageError) -> StorageFingerprint? {
        do {
            guard let data else {
                try storage.remove(key: key)
                return .absent
            }
            if let changeDetecting { return try changeDetecting.saveReturningFingerprint(data, key: key) }
            try storage.save(data, key: key)
            return nil
        } catch {
            throw storageError(error, operation: data == nil ? .remove : .save)
        }
    }

    private func encoded(_ value: Value) throws(StorageError) -> Data? {
        do {
            return try codec.encode(value)
        } catch {
            throw StorageError(.unencodable, key: key, operation: .encode, message: """
                Could not encode the value of \(String(reflecting: key)): \(CodingFailure.describe(error)). It \
                stays in memory, unsaved.
                """, cause: error)
        }
    }

    private func storageError(_ error: any Error, operation: StorageError.Operation) -> StorageError {
        error as? StorageError ?? StorageError(
            .io, key: key, operation: operation,
            message: "Could not \(operation.rawValue) \(String(reflecting: key)): \(CodingFailure.describe(error)).",
            cause: error
        )
    }

    /// Whether the caller runs on the writer: inside an `update` body on a transactional storage (or an owner let
    /// go by the outside-change check, which holds it there for a moment).
    private var isOnWriter: Bool {
        DispatchQueue.getSpecific(key: writerKey) == ObjectIdentifier(self)
    }

    /// Writes unsaved changes now; throws the failure. Inside an `update` body on a transactional storage it does
    /// nothing: the storage is inside that update's transaction, which stores the latest value when the body ends.
    func flush() throws(StorageError) {
        guard !isOnWriter else { return }
        let (outcome, lastWrite) = writer.sync {
            let outcome = write(machine.withLock { $0.nextWrite() })
            return (outcome, lastWriteOutcome.withLock { $0 })
        }
        if let lastWrite { report(lastWrite) }
        if case .failed(let error, _) = outcome { throw error }
    }

    func ownerDidEnd() {
        stopFollowing()
        flushAtExit()
        PendingWrites.shared.unregister(self)
    }

    /// Writes what is pending, reporting a failure as a lost write: at exit, or when the owner goes away. The owner
    /// may go away on the writer itself (the outside-change check holds it for a moment): then the write happens
    /// right there. An exit inside an `update` body on a transactional storage writes nothing: the storage is inside
    /// that update's transaction, which cannot be re-entered, and the update never completes.
    func flushAtExit() {
        let outcome: Outcome
        if isOnWriter {
            guard !machine.withLock({ $0.inTransaction }) else { return }
            outcome = write(machine.withLock { $0.nextWrite() })
        } else {
            outcome = writer.sync { write(machine.withLock { $0.nextWrite() }) }
        }
        if case .failed(let error, _) = outcome {
            StatehouseDiagnostics.report(.lostWrite(error))
        }
    }

    /// Publishes an outcome through `lastError`, unless a later outcome was published already. Never called on
    /// `writer`.
    func report(_ outcome: Outcome) {
        let isLatest = { (number: UInt64, isCheckFailure: Bool) in
            self.machine.withLock { $0.mayPublish(outcome: number, isCheckFailure: isCheckFailure) }
        }
        switch outcome {
        case .nothingToWrite:
            return
        case .written(let number):
            lastError.modify(nil) { current in isLatest(number, false) && current != nil }
        case .failed(let error, let number):
            lastError.modify(error) { current in isLatest(number, false) && current != error }
        case .checkFailed(let error, let number):
            lastError.modify(error) { current in isLatest(number, true) && current != error }
        case .withdrawn(let number):
            // Asked whatever is published: a failure withdrawn before it is published must never be.
            lastError.modify(nil) { current in machine.withLock { $0.mayWithdraw(through: number) } && current != nil }
        }
    }

    // MARK: Transactions

    /// Runs an update of the owner as a transaction of a ``TransactionalStorage``, run again while it fails for a
    /// reason that may pass (see ``PersistenceMachine/retryDelay(afterFailedAttempts:error:outcomeUnknown:)``).
    ///
    /// `attempt` runs on the writer, while the storage is locked, with the stored value (`nil` if nothing decodable
    /// is stored), and returns the value to store; the owner is changed only by `adopt`, once that value is stored,
    /// so a failed transaction leaves nothing behind: no value made from data the storage no longer holds is ever
    /// written later with a plain save. The tries, and the backoff between them, all happen on the writer: no other
    /// write or check of this key runs in between.
    func updateInTransaction(_ attempt: (_ stored: Value?) -> Value, adopt: () -> Snapshot?) {
        guard let transactional else { return }
        var keptAside: (data: Data, error: StorageError)?
        var unkept: StorageError?
        let outcome: Outcome = writer.sync {
            let number = machine.withLock { $0.beginTransaction() }
            var failures = 0
            while true {
                do {
                    let fingerprint = try transactWritingOverOnlyKeptData(
                        transactional, keptAside: &keptAside, unkept: &unkept
                    ) { try encoded(attempt($0)) }
                    let adopted = adopt()
                    _ = machine.withLock { machine in
                        recordingOutsideTheLock(&machine) {
                            $0.transactionCommitted(adopted: adopted, fingerprint: fingerprint)
                        }
                    }
                    return .written(number: number)
                } catch {
                    failures += 1
                    let failure = storageError(error, operation: .transact)
                    let unknown = transactional.outcomeIsUnknown(after: failure)
                    guard let delay = PersistenceMachine<Value>.retryDelay(
                        afterFailedAttempts: failures, error: failure, outcomeUnknown: unknown
                    ) else {
                        machine.withLock { $0.transactionFailed(outcomeUnknown: unknown, unkept: unkept) }
                        return .failed(failure, number: number)
                    }
                    // On the caller's thread, which waits for its update anyway (as it waits for the storage).
                    Thread.sleep(forTimeInterval: delay / .seconds(1))
                }
            }
        }
        report(outcome)
        if case .written = outcome, let kept = keptAside?.error {
            report(.checkFailed(kept, number: machine.withLock { $0.checkFailed(kept) }))
        }
    }

    /// Runs on `writer`: a transaction that passes `body` the stored value, `nil` if nothing is stored or what is
    /// stored does not decode. Bytes that do not decode are written over only once a copy of them is kept aside:
    /// the transaction is abandoned, the copy made outside it (a storage may not be reentered from its transaction),
    /// and the transaction run again, which goes on if the key still holds those very bytes. `keptAside` is the last
    /// copy made, and what reports it; `unkept` is set to the `.undecodable` error when no copy could be kept.
    ///
    /// - Throws: What the transaction throws, or the `.undecodable` error when no copy could be kept.
    private func transactWritingOverOnlyKeptData(
        _ transactional: any TransactionalStorage,
        keptAside: inout (data: Data, error: StorageError)?,
        unkept: inout StorageError?,
        _ body: (Value?) throws -> Data?
    ) throws -> StorageFingerprint {
        while true {
            let alreadyKept = keptAside?.data
            // Found by the transform itself: a storage may wrap what its transform throws in an error of its own.
            var notKept: (data: Data, cause: any Error)?
            do {
                return try transactional.transact(key: key) { data in
                    guard let data else { return try body(nil) }
                    let stored: Value?
                    do {
                        stored = try codec.decode(data)
                    } catch {
                        // Thrown before `body` runs: the owner is changed only by the transaction that goes on.
                        guard data == alreadyKept else {
                            notKept = (data, error)
                            throw NotKeptYet()
                        }
                        stored = nil
                    }
                    return try body(stored)
                }
            } catch {
                guard let notKept else { throw error }
                let undecodable = undecodableOutsideData(notKept.data, error: notKept.cause)
                guard undecodable.keptAside != nil else {
                    unkept = undecodable
                    throw undecodable
                }
                keptAside = (notKept.data, undecodable)
            }
        }
    }
}

/// Stored bytes a transaction found undecodable and not kept aside yet: it ends, unwritten, so that they can be.
private struct NotKeptYet: Error {}

/// Marks each writer queue with its persistence, to tell when code already runs there.
private let writerKey = DispatchSpecificKey<ObjectIdentifier>()
