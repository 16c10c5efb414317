import Dispatch
import Foundation

// Locks and threads of persistence, in one place.
//
// What is locked, outermost first:
//
// - The owner's lock: a container's state lock (its `ContainerLink`), or a store's `core`.
// - The writer: a serial queue per key, which does all of the key's I/O. A caller in `writer.sync` waits for it as
//   for a lock, so it counts as one here.
// - The storage's own locks, and a transaction of a `TransactionalStorage` (which locks the key, or the database).
// - `lastError`'s lock: the state lock of the container that publishes outcomes.
// - `machine`: the lock around `PersistenceMachine`, the persistence lock.
// - `following`, `PendingWrites`' table, the watches' tables: leaves, like `machine`.
//
// Which may be held while taking which (an arrow: "may wait for, while holding"); nothing else is:
//
//     owner's lock  -> machine        the start of a transaction's try (`transactionTryStarts`, under the owner's
//                                     lock so that "is a change pending" and the body's start are one step), and a
//                                     value taken from storage (`tookStoredValue`, so that its count and "saved"
//                                     are one step)
//     owner's lock  -> writer         `flush()` or an exit inside an `update` body or a reducer, on a storage that
//                                     is not transactional (there the writer never waits for the owner's lock)
//     writer        -> storage        every read, write, check and transaction of the key
//     storage       -> owner's lock   inside a transaction only, on the writer: the update body and its adoption.
//                                     On a transactional storage the owner's lock is never held while waiting for
//                                     the writer: a flush inside the body runs on the writer and returns at once,
//                                     an exit there writes nothing. Checks only try the owner's lock
//                                     (`withLockIfAvailable`) and ask again later if it is held.
//     writer        -> machine, following, lastError's lock (read only: when a write is refused, and before a write
//                                     or a transaction ends, to see whether anything shows)
//     applier       -> owner's lock   handing over a value another process stored (then -> machine, as above)
//     lastError's lock -> machine     `report(_:)`: whether an outcome may be published is decided under the lock
//                                     that publishes it, so that a late failure never replaces a later success
//
// Never held while waiting: the machine and the other leaves (what they hold is copied out, and called or let go
// after: a snapshot may hold the last reference to a token whose cancellation takes the owner's lock). Never waited
// for on the writer: `lastError`'s listeners (outcomes are published off the writer, since a listener may flush),
// the applier (only `async`), a sleep (a transaction's backoff lets the writer go; see `updateInTransaction`).
//
// The persistence lock, on the write path, and why each acquisition is needed:
//
// - Coalesced write, from `modify` to the bookkeeping after the storage's save: 3 per window in the steady state.
//   1. Caller, `changed`: records the snapshot and decides whether to schedule a write (one per change; the first
//      of a burst schedules). It is the only one a change pays.
//   2. Writer, the window due: takes the latest snapshot and ends the schedule in one step (a change after it
//      schedules again), with the fingerprint this process last read or wrote. Only the writer changes that
//      fingerprint, so the look for data another process stored since needs no acquisition of its own.
//   3. Writer, after the save: the count saved (`update`'s tries and the checks read it), the last write's outcome
//      (`flush()` publishes it) and whether to publish this one. A success when nothing shows in `lastError` (read
//      just before: a value the app set there is cleared as a failure is) is claimed there and not published: no
//      hop to another thread, no write to `lastError`.
//   Publishing (a failure, or the success that clears one) adds 2, off the writer under `lastError`'s lock: whether
//   it may (`mayPublish`), and its end (`publicationEnded`), until which no success is claimed without publishing.
// - Write-through: the same 3, on the caller's thread (`writer.sync`).
// - `flush()`: 2 when it writes; 1 when nothing is pending (that decision, and whether the last write's outcome is
//   published yet).
// - `update` on a `TransactionalStorage`: 1 per try (whether a change is pending, and marking the body as running
//   inside the transaction), 1 at the end (commit or failure, numbered), and 1 per try that fails and runs again
//   (the writer is let go for the backoff, so the body no longer runs inside a transaction). One try: 2.
//
// Threads a coalesced write crosses: the caller's, the clock's task (the window), the writer; a publication adds a
// global-queue thread.

/// Writes a container's value (or a store's state) to its storage, as its ``WritePolicy`` says, follows changes
/// others make, and reports failures. The decisions are ``PersistenceMachine``'s; this class holds it under a lock,
/// does the I/O on a serial *writer* queue, and keeps time with an injected clock. Its locks, their order and what
/// each write costs are described at the top of this file.
///
/// The writer encodes the snapshot current *when it writes*, so a burst of changes costs one encoding and one
/// write; it never waits for the owner's lock outside a transaction, so a flush at exit works even while this thread
/// is inside a reducer or an `update` body. A write that fails leaves the change pending: the next change,
/// `flush()`, deallocation or exit tries again.
///
/// Outcomes are published through `lastError` off the writer queue (its listeners run synchronously and may flush,
/// which waits for the writer).
final class StatePersistence<Value: Sendable>: Persisting, StatePersistenceFlushing {
    typealias Snapshot = PersistedSnapshot<Value>
    typealias Machine = PersistenceMachine<Value>
    typealias Outcome = PersistenceOutcome

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
            machine: PersistenceMachine(
                initial: loaded.value, policy: writes, canWrite: loaded.canWrite, showsFailure: loaded.error != nil
            ),
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

    // MARK: Changes

    func changed(_ value: Value, count: UInt64) {
        let (afterChange, _) = machine.withLock { machine in
            recordingOutsideTheLock(&machine) { $0.changed(Snapshot(value: value, count: count)) }
        }
        switch afterChange {
        case .nothing:
            break
        case .writeNow:
            let (outcome, publish) = writer.sync { write { $0.nextWrite() } }
            if publish { report(outcome) }
        case .schedule(let window):
            Task.detached { [weak self, clock] in
                try? await clock.sleep(for: window)
                guard let self else { return }
                writer.async {
                    let (outcome, publish) = self.write { $0.scheduledWriteIsDue() }
                    if publish { DispatchQueue.global().async { self.report(outcome) } }
                }
            }
        }
    }

    func tookStoredValue(_ value: Value, count: UInt64) -> Snapshot {
        machine.withLock { machine in
            recordingOutsideTheLock(&machine) { $0.tookStoredValue(Snapshot(value: value, count: count)) }
        }.1
    }

    /// Runs `record`, which may replace the machine's latest snapshot, and returns its result with that snapshot, for
    /// the caller to let go once it has released the machine's lock.
    ///
    /// The snapshot may hold the last reference to the value, and the value the last reference to a token of the
    /// container: its cancellation may wait for a listener's call in progress, and that call may be changing the
    /// container, which takes this lock: letting it go under the lock could deadlock.
    private func recordingOutsideTheLock<Result>(
        _ machine: inout PersistenceMachine<Value>, _ record: (inout PersistenceMachine<Value>) -> Result
    ) -> (Result, Snapshot) {
        let replaced = machine.latest
        return (record(&machine), replaced)
    }

    // MARK: Writes

    /// Runs on `writer`: takes the machine's decision with `decide`, and carries it out. Returns the outcome, and
    /// whether to publish it, which is never done here (see ``report(_:)``).
    private func write(_ decide: (inout Machine) -> Machine.Write) -> (outcome: Outcome, publish: Bool) {
        let (decision, seen) = machine.withLock { machine in (decide(&machine), machine.seen) }
        return attempt(decision, seen: seen)
    }

    /// Runs on `writer`: carries out `decision`, taken when this process knew of the stored bytes what `seen` says
    /// (only the writer changes that, so it still holds).
    private func attempt(_ decision: Machine.Write, seen: Machine.SeenData) -> (outcome: Outcome, publish: Bool) {
        switch decision {
        case .nothing:
            return (.nothingToWrite, false)
        case .refuse(let number):
            return ended(.failed(lastError.value ?? StorageError(
                .io, key: key, operation: .save,
                message: "Not writing \(String(reflecting: key)): its stored data could not be read."
            ), number: number))
        case .keepAsideFirst(let snapshot, let number):
            if let held = keepUnkeptOutsideDataAside() { return ended(.failed(held, number: number)) }
            machine.withLock { $0.outsideDataIsSafe() }
            return store(snapshot, number: number)
        case .write(let snapshot, let number):
            if let held = keepUnseenOutsideDataAside(seen: seen) { return ended(.failed(held, number: number)) }
            return store(snapshot, number: number)
        }
    }

    /// Runs on `writer`: writes `snapshot`, whose outcome is numbered `number`.
    private func store(_ snapshot: Snapshot, number: UInt64) -> (outcome: Outcome, publish: Bool) {
        let written: StorageFingerprint?
        do {
            written = try store(try encoded(snapshot.value))
        } catch {
            return ended(.failed(error, number: number))
        }
        let outcome = Outcome.written(number: number)
        let errorShows = lastError.value != nil
        let publish = machine.withLock { machine in
            machine.wrote(snapshot, fingerprint: written)
            return machine.writeEnded(outcome, errorShows: errorShows)
        }
        return (outcome, publish)
    }

    /// Runs on `writer`: a write that stored nothing ended with `outcome`.
    private func ended(_ outcome: Outcome) -> (outcome: Outcome, publish: Bool) {
        // Read before the machine's lock, which is never held while taking `lastError`'s.
        let errorShows = lastError.value != nil
        return (outcome, machine.withLock { $0.writeEnded(outcome, errorShows: errorShows) })
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
    ///
    /// Once it returns, ``lastError`` tells how the writer's last write went, whoever made it: a window's is
    /// published later, off the writer queue; ``flushAtExit()``'s (`StatehouseLifecycle.flushPendingWrites()`)
    /// never; another flush's, running at the same moment, perhaps not yet. So a flush that finds nothing to write
    /// publishes the last write's outcome, unless it is published already.
    func flush() throws(StorageError) {
        guard !isOnWriter else { return }
        let (outcome, toPublish) = writer.sync { () -> (Outcome, Outcome?) in
            let (turn, seen) = machine.withLock { machine in (machine.flushes(), machine.seen) }
            guard case .nothing = turn.write else {
                let (outcome, publish) = attempt(turn.write, seen: seen)
                return (outcome, publish ? outcome : nil)
            }
            return (.nothingToWrite, turn.unpublished)
        }
        if let toPublish { report(toPublish) }
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
    ///
    /// It publishes nothing: its outcome is the last write's, which the next `flush()` publishes.
    func flushAtExit() {
        let outcome: Outcome
        if isOnWriter {
            let turn = machine.withLock { machine in
                machine.inTransaction ? nil : (machine.nextWrite(), machine.seen)
            }
            guard let (decision, seen) = turn else { return }
            outcome = attempt(decision, seen: seen).outcome
        } else {
            outcome = writer.sync { write { $0.nextWrite() }.outcome }
        }
        if case .failed(let error, _) = outcome {
            StatehouseDiagnostics.report(.lostWrite(error))
        }
    }

    /// Publishes an outcome through `lastError`, unless a later outcome was published already. Never called on
    /// `writer`.
    ///
    /// Whether it may is asked under `lastError`'s lock, which publishes it: two outcomes published at once end in
    /// number order. The publication is under way until `lastError` holds its value and its listeners were called;
    /// until then no success is claimed without being published (see ``PersistenceMachine/claimsQuietly(_:errorShows:)``).
    func report(_ outcome: Outcome) {
        var allowed = false
        func mayPublish(isCheckFailure: Bool, isFailure: Bool) -> Bool {
            allowed = machine.withLock {
                $0.mayPublish(outcome: outcome.number, isCheckFailure: isCheckFailure, isFailure: isFailure)
            }
            return allowed
        }
        switch outcome {
        case .nothingToWrite:
            return
        case .written:
            lastError.modify(nil) { current in mayPublish(isCheckFailure: false, isFailure: false) && current != nil }
        case .failed(let error, _):
            lastError.modify(error) { current in mayPublish(isCheckFailure: false, isFailure: true) && current != error }
        case .checkFailed(let error, _):
            lastError.modify(error) { current in mayPublish(isCheckFailure: true, isFailure: true) && current != error }
        case .withdrawn(let number):
            // Asked whatever is published: a failure withdrawn before it is published must never be.
            lastError.modify(nil) { current in
                allowed = machine.withLock { $0.mayWithdraw(through: number) }
                return allowed && current != nil
            }
        }
        if allowed { machine.withLock { $0.publicationEnded() } }
    }

    // MARK: Transactions

    /// A try of ``updateInTransaction(_:adopt:)`` runs the owner's update body now; called under the owner's lock.
    func transactionTryStarts(ownerCount count: UInt64) -> Bool {
        machine.withLock { $0.transactionTryStarts(ownerCount: count) }
    }

    /// What one try of an update's transaction came to.
    private enum TransactionTry {
        /// It failed in a way that may pass: run it again after `delay`.
        case again(after: Duration)
        /// The update is over: publish `outcome` if `publish`, then `keptAside`, if there is one.
        case over(Outcome, publish: Bool, keptAside: Outcome?)
    }

    /// Runs an update of the owner as a transaction of a ``TransactionalStorage``, run again while it fails for a
    /// reason that may pass (see ``PersistenceMachine/retryDelay(afterFailedAttempts:error:outcomeUnknown:)``).
    ///
    /// `attempt` runs on the writer, while the storage is locked, with the stored value (`nil` if nothing decodable
    /// is stored), and returns the value to store; the owner is changed only by `adopt`, once that value is stored,
    /// so a failed transaction leaves nothing behind: no value made from data the storage no longer holds is ever
    /// written later with a plain save.
    ///
    /// Each try runs on the writer; the backoff between two tries does not. The caller waits for its update anyway,
    /// so it sleeps on its own thread, holding no lock and not the writer: flushes, writes and checks of the key go
    /// on meanwhile, and the next try starts from what they left (a change made meanwhile is pending, and the body
    /// starts from it; once written or replaced by a stored value, the body starts from the stored one). The backoff
    /// is real time, not the injected clock: waking this thread from a task sleeping on the clock would need a free
    /// thread of the task pool, and callers blocked in `update` may be holding all of them.
    func updateInTransaction(_ attempt: (_ stored: Value?) -> Value, adopt: () -> Snapshot?) {
        guard let transactional else { return }
        var keptAside: (data: Data, error: StorageError)?
        var unkept: StorageError?
        var failures = 0
        while true {
            let tried: TransactionTry = writer.sync {
                do {
                    let fingerprint = try transactWritingOverOnlyKeptData(
                        transactional, keptAside: &keptAside, unkept: &unkept
                    ) { try encoded(attempt($0)) }
                    let adopted = adopt()
                    let kept = keptAside?.error
                    let errorShows = lastError.value != nil
                    let (over, _) = machine.withLock { machine in
                        recordingOutsideTheLock(&machine) { machine -> TransactionTry in
                            let outcome = Outcome.written(
                                number: machine.transactionCommitted(adopted: adopted, fingerprint: fingerprint)
                            )
                            let publish = !machine.claimsQuietly(outcome, errorShows: errorShows)
                            // Numbered after the update's outcome: bytes kept aside stay reported after its success.
                            return .over(outcome, publish: publish, keptAside: kept.map {
                                .checkFailed($0, number: machine.checkFailed($0))
                            })
                        }
                    }
                    return over
                } catch {
                    failures += 1
                    let failure = storageError(error, operation: .transact)
                    let unknown = transactional.outcomeIsUnknown(after: failure)
                    if let delay = Machine.retryDelay(
                        afterFailedAttempts: failures, error: failure, outcomeUnknown: unknown
                    ) {
                        machine.withLock { $0.transactionTryFailed() }
                        return .again(after: delay)
                    }
                    let number = machine.withLock { $0.transactionFailed(outcomeUnknown: unknown, unkept: unkept) }
                    return .over(.failed(failure, number: number), publish: true, keptAside: nil)
                }
            }
            switch tried {
            case .again(let delay):
                Thread.sleep(forTimeInterval: delay / .seconds(1))
            case .over(let outcome, let publish, let keptAside):
                if publish { report(outcome) }
                if let keptAside { report(keptAside) }
                return
            }
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
