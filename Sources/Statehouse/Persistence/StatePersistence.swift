import Dispatch
import Foundation
import Synchronization

/// Writes a container's value (or a store's state) to its storage, as its ``WritePolicy`` says, and reports
/// failures.
///
/// The owner counts its changes under its own lock (``ContainerState/changeCount``) and reports each one here with
/// the value it produced (``changed(_:count:)``); the newest report is the *snapshot*. `savedCount` is the count of
/// the value the storage holds as far as this process knows (written by us, or read from it). That gives one rule
/// for "a local change is pending": the owner's count is past `savedCount`. Decisions that must not miss a change
/// (a transaction starting from the stored value, a value from outside replacing the owner's) take that rule
/// under the owner's lock, together with the change they make.
///
/// The writer encodes the snapshot current *when it writes*, so a burst of changes costs one encoding and one
/// write; it never takes the owner's lock, so a flush at exit works even while this thread is inside a reducer or
/// an `update` body. A write that fails leaves the change pending: the next change, `flush()`, deallocation or exit
/// tries again.
///
/// Outcomes are published through `lastError` off the writer queue (its listeners run synchronously and may flush,
/// which waits for the writer), each with the number of the write it reports: an outcome older than the one already
/// published is dropped, so a late failure never hides a later success.
@usableFromInline
final class StatePersistence<Value: Sendable>: Sendable {
    /// The owner's newest value and its change count.
    @usableFromInline
    struct Snapshot: Sendable {
        @usableFromInline let value: Value
        @usableFromInline let count: UInt64

        @inlinable
        init(value: Value, count: UInt64) {
            self.value = value
            self.count = count
        }
    }

    let storage: any StateStorage
    /// `storage`, if it can tell its own writes from others'.
    private let changeDetecting: (any ChangeDetectingStorage)?
    /// `storage`, if `update` runs as a transaction on it.
    private let transactional: (any TransactionalStorage)?
    /// Whether the owner's `update` goes through ``updateInTransaction(_:)``.
    @usableFromInline let updatesInTransactions: Bool
    let key: String
    @usableFromInline let policy: WritePolicy
    /// The last failure, or `nil` once a write succeeded: what the app observes.
    let lastError: StateContainer<StorageError?>

    private let encode: @Sendable (Value) throws -> Data?
    /// `false` when the stored data could not be read or kept aside: writing would destroy it.
    private let canWrite: Bool
    @usableFromInline let snapshot: Locked<Snapshot>
    /// The change count of the value in storage, as far as this process knows.
    private let savedCount = Atomic<UInt64>(0)
    /// Following outside changes: how to decode stored data, how often to look, and the owner's hooks: its change
    /// count now, and how it takes a value that came from outside (without writing it back).
    private let externalChanges: ExternalChanges
    private let decode: @Sendable (Data) throws -> Value
    private let owner = Locked<Owner?>(nil)
    /// The fingerprint of what this writer last read or wrote. Touched only on `writer`.
    private let knownFingerprint = Locked<StorageFingerprint?>(nil)
    private let poller = Locked<PollTimer?>(nil)
    /// Applies outside values in order, off `writer` (their listeners may flush).
    private let applier: DispatchQueue
    /// Whether a coalesced write is scheduled: it writes the snapshot current when it runs.
    @usableFromInline let scheduled = Atomic<Bool>(false)
    /// Numbers writes (on `writer`) and the outcome last published, so that an older outcome is never published
    /// after a newer one.
    private let writeNumber = Atomic<UInt64>(0)
    private let publishedWrite = Atomic<UInt64>(0)
    /// Serializes writes, so that an older value never lands after a newer one.
    private let writer: DispatchQueue
    /// Set on the writer while a transaction runs the owner's `update` body.
    private let inTransaction = Atomic<Bool>(false)

    /// The owner's side of following outside changes.
    struct Owner: Sendable {
        /// The owner's change count now, read under its lock; `nil` if the owner is gone or its lock is held. The
        /// poll then tries again at its next tick: waiting for the lock on the writer could deadlock with a flush
        /// from inside a reducer or an `update` body (one that calls `exit()`, say), which waits for the writer.
        let changeCount: @Sendable () -> UInt64?
        /// Takes a value from storage if the owner's count is still the given one; the owner then reports the
        /// change with ``tookStoredValue(_:count:)``, or calls the closure it is given if it refused the value.
        let takeStoredValue: @Sendable (Value, _ ifUnchangedSince: UInt64, _ refused: @escaping @Sendable () -> Void) -> Void
    }

    init(
        storage: any StateStorage,
        key: String,
        initialValue: Value,
        policy: WritePolicy,
        canWrite: Bool,
        externalChanges: ExternalChanges,
        decode: @escaping @Sendable (Data) throws -> Value,
        encode: @escaping @Sendable (Value) throws -> Data?
    ) {
        self.storage = storage
        self.changeDetecting = storage as? any ChangeDetectingStorage
        self.transactional = storage as? any TransactionalStorage
        self.updatesInTransactions = transactional != nil && canWrite
        self.key = key
        self.policy = policy
        self.canWrite = canWrite
        self.externalChanges = externalChanges
        self.decode = decode
        self.encode = encode
        self.snapshot = Locked(Snapshot(value: initialValue, count: 0))
        self.lastError = StateContainer(nil, key: KeyRegistry.shared.uniqueKey(prefix: "\(key).storageError"))
        self.writer = DispatchQueue(label: "Statehouse.persistence.\(key)")
        self.applier = DispatchQueue(label: "Statehouse.persistence.\(key).outside")
        writer.setSpecific(key: writerKey, value: ObjectIdentifier(self))
    }

    /// Registers the owner, once it exists, for flushes at exit and, if asked, to follow outside changes.
    func attach(_ owner: Owner) {
        PendingWrites.shared.register(self)
        guard case .poll(let interval) = externalChanges, let storage = changeDetecting else { return }
        self.owner.withLock { $0 = owner }
        writer.sync {
            let initial = try? storage.fingerprint(key: key)
            knownFingerprint.withLock { $0 = initial }
        }
        let timer = DispatchSource.makeTimerSource(queue: writer)
        let nanoseconds = Int(interval.components.seconds * 1_000_000_000 + interval.components.attoseconds / 1_000_000_000)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds))
        timer.setEventHandler { [weak self] in self?.checkForOutsideChange(in: storage) }
        let poll = PollTimer(timer)
        poller.withLock { $0 = poll }
        timer.resume()
    }

    /// Whether the owner, whose change count is `count`, has a change the storage does not have yet.
    @usableFromInline
    func hasPendingChange(ownerCount count: UInt64) -> Bool {
        count != savedCount.load(ordering: .sequentiallyConsistent)
    }

    /// Runs on `writer`: reloads the key if someone else changed it. The owner takes the value only if it has not
    /// changed since a moment when no local change was pending: a local change made at any point in between is
    /// newer, wins, and will overwrite the stored value.
    private func checkForOutsideChange(in storage: any ChangeDetectingStorage) {
        guard let owner = owner.withLock({ $0 }), let count = owner.changeCount(),
            !hasPendingChange(ownerCount: count),
            let fingerprint = try? storage.fingerprint(key: key),
            fingerprint != knownFingerprint.withLock({ $0 })
        else { return }
        knownFingerprint.withLock { $0 = fingerprint }
        guard let data = try? storage.load(key: key), let value = try? decode(data) else { return }
        applier.async {
            owner.takeStoredValue(value, count) { [weak self] in self?.forget(fingerprint) }
        }
    }

    /// The owner refused the value read under `fingerprint` because it changed meanwhile, by a local change or by
    /// an earlier outside value it was still taking. Forgets the fingerprint, unless a write replaced it since, so
    /// that the next poll reads the key again: otherwise a newer outside value refused behind an older one would
    /// never be read.
    private func forget(_ fingerprint: StorageFingerprint) {
        writer.async { [self] in
            knownFingerprint.withLock { known in
                if known == fingerprint { known = nil }
            }
        }
    }

    /// The owner changed; `count` is its change count after the change, `value` the value it produced.
    ///
    /// Inlinable, so that the common case — a coalesced write is scheduled already — runs code specialized for
    /// `Value`: recording the snapshot and checking the flag.
    @inlinable
    func changed(_ value: Value, count: UInt64) {
        record(Snapshot(value: value, count: count))
        // A scheduled write that is seen here reads the snapshot after this record: it clears the flag before it
        // takes the snapshot's lock, and that lock orders the two (so a plain load is enough, and saves the
        // exchange in a burst).
        if case .coalesced = policy,
            scheduled.load(ordering: .relaxed) || scheduled.exchange(true, ordering: .sequentiallyConsistent)
        {
            return
        }
        write()
    }

    /// Writes now (write-through), or schedules the coalesced write.
    @usableFromInline
    func write() {
        switch policy {
        case .writeThrough:
            report(writer.sync { writeIfPending() })
        case .coalesced(let window):
            let delay = window.components.seconds * 1_000_000_000 + window.components.attoseconds / 1_000_000_000
            writer.asyncAfter(deadline: .now() + .nanoseconds(Int(delay))) { [weak self] in
                guard let self else { return }
                scheduled.store(false, ordering: .sequentiallyConsistent)
                let outcome = writeIfPending()
                DispatchQueue.global().async { self.report(outcome) }
            }
        }
    }

    /// The owner took `value`, read from storage, as its change number `count`: it is saved already.
    func tookStoredValue(_ value: Value, count: UInt64) {
        record(Snapshot(value: value, count: count))
        markSaved(count)
    }

    /// Keeps `newer` unless a later change was recorded already (owners report after releasing their lock, so two
    /// reports can arrive out of order).
    @inlinable
    func record(_ newer: Snapshot) {
        snapshot.withLock { current in
            if newer.count > current.count { current = newer }
        }
    }

    private func markSaved(_ count: UInt64) {
        var saved = savedCount.load(ordering: .sequentiallyConsistent)
        while saved < count {
            (_, saved) = savedCount.compareExchange(
                expected: saved, desired: count, ordering: .sequentiallyConsistent
            )
        }
    }

    /// Whether the caller runs on the writer: inside an `update` body on a transactional storage (or a container
    /// let go by the poller, which holds it there for a moment).
    private var isOnWriter: Bool {
        DispatchQueue.getSpecific(key: writerKey) == ObjectIdentifier(self)
    }

    /// Writes unsaved changes now; throws the failure. Inside an `update` body on a transactional storage it does
    /// nothing: the storage is inside that update's transaction, which stores the latest value when the body ends.
    func flush() throws(StorageError) {
        guard !isOnWriter else { return }
        let outcome = writer.sync { writeIfPending() }
        report(outcome)
        if case .failed(let error, _) = outcome { throw error }
    }

    /// Writes what is pending of an owner that is going away, and stops following outside changes.
    func ownerDidEnd() {
        poller.withLock { $0 }?.source.cancel()
        owner.withLock { $0 = nil }
        flushAtExit()
        PendingWrites.shared.unregister(self)
    }

    /// Writes what is pending, reporting a failure as a lost write: at exit, or when the owner goes away. The owner
    /// may go away on the writer itself (the poller holds it for a moment): then the write happens right there. An
    /// exit inside an `update` body on a transactional storage writes nothing: the storage is inside that update's
    /// transaction, which cannot be re-entered, and the update never completes.
    func flushAtExit() {
        let outcome: Outcome
        if isOnWriter {
            guard !inTransaction.load(ordering: .relaxed) else { return }
            outcome = writeIfPending()
        } else {
            outcome = writer.sync { writeIfPending() }
        }
        if case .failed(let error, _) = outcome {
            StatehouseDiagnostics.report(.lostWrite(error))
        }
    }

    /// What a write attempt did; `number` orders the outcomes.
    private enum Outcome: Sendable {
        case nothingToWrite
        case written(number: UInt64)
        case failed(StorageError, number: UInt64)
    }

    /// Runs on `writer`; publishes nothing itself (see ``report(_:)``).
    private func writeIfPending() -> Outcome {
        let latest = snapshot.withLock { $0 }
        guard hasPendingChange(ownerCount: latest.count) else { return .nothingToWrite }
        let number = writeNumber.add(1, ordering: .sequentiallyConsistent).newValue
        guard canWrite else {
            return .failed(lastError.value ?? StorageError(
                .io, key: key, message: "Not writing \(String(reflecting: key)): its stored data could not be read."
            ), number: number)
        }
        do {
            // Our own write is not an outside change: remember its fingerprint.
            let written: StorageFingerprint?
            if let data = try encode(latest.value) {
                if let changeDetecting {
                    written = try changeDetecting.saveReturningFingerprint(data, key: key)
                } else {
                    try storage.save(data, key: key)
                    written = nil
                }
            } else {
                try storage.remove(key: key)
                written = .absent
            }
            if let written { knownFingerprint.withLock { $0 = written } }
            markSaved(latest.count)
            return .written(number: number)
        } catch {
            return .failed(storageError(error), number: number)
        }
    }

    /// Runs an update of the owner as one transaction of a ``TransactionalStorage``.
    ///
    /// `apply` runs on the writer, while the storage is locked, with the stored value (`nil` if nothing decodable is
    /// stored). It changes the owner under the owner's lock — starting from the stored value only if no local change
    /// is pending, by ``hasPendingChange(ownerCount:)`` taken under that same lock — and returns the owner's new
    /// value and change count, which are stored before the transaction ends.
    ///
    /// - Returns: `false` if `apply` did not run (the transaction could not start); the failure is reported.
    func updateInTransaction(_ apply: (_ stored: Value?) -> Snapshot) -> Bool {
        guard let transactional else { return false }
        var applied = false
        let outcome: Outcome = writer.sync {
            inTransaction.store(true, ordering: .relaxed)
            defer { inTransaction.store(false, ordering: .relaxed) }
            let number = writeNumber.add(1, ordering: .sequentiallyConsistent).newValue
            var result: Snapshot?
            do {
                let fingerprint = try transactional.transact(key: key) { data in
                    let changed = apply(data.flatMap { try? decode($0) })
                    applied = true
                    result = changed
                    return try encode(changed.value)
                }
                knownFingerprint.withLock { $0 = fingerprint }
                if let result {
                    record(result)
                    markSaved(result.count)
                }
                return .written(number: number)
            } catch {
                // The owner changed, but its change is not stored: it is pending, and written again later.
                if let result { record(result) }
                return .failed(storageError(error), number: number)
            }
        }
        report(outcome)
        return applied
    }

    private func storageError(_ error: any Error) -> StorageError {
        error as? StorageError ?? StorageError(.io, key: key, message: "Could not save \(String(reflecting: key)): \(error).")
    }

    /// Publishes the outcome of a write through `lastError`, unless a later write's outcome was published already.
    /// Never called on `writer`.
    private func report(_ outcome: Outcome) {
        let newError: StorageError?
        let number: UInt64
        switch outcome {
        case .nothingToWrite:
            return
        case .written(let written):
            (newError, number) = (nil, written)
        case .failed(let error, let failed):
            (newError, number) = (error, failed)
        }
        lastError.modify(newError) { current in
            guard number > publishedWrite.load(ordering: .sequentiallyConsistent) else { return false }
            publishedWrite.store(number, ordering: .sequentiallyConsistent)
            return current != newError
        }
    }
}

/// Marks each writer queue with its persistence, to tell when code already runs there.
private let writerKey = DispatchSpecificKey<ObjectIdentifier>()

/// The timer that looks for outside changes.
// @unchecked: a dispatch source is thread-safe; the box is made once, then only cancelled.
private final class PollTimer: @unchecked Sendable {
    let source: any DispatchSourceTimer

    init(_ source: any DispatchSourceTimer) {
        self.source = source
    }
}

/// The persisted containers and stores with a writer, to flush at a normal exit of the process.
final class PendingWrites: Sendable {
    static let shared = PendingWrites()

    private let flushers = Locked<[ObjectIdentifier: @Sendable () -> Void]>([:])
    private let installed = Atomic<Bool>(false)

    func register<Value>(_ persistence: StatePersistence<Value>) {
        if !installed.exchange(true, ordering: .relaxed) {
            atexit { PendingWrites.shared.flushAll() }
        }
        flushers.withLock { $0[ObjectIdentifier(persistence)] = { [weak persistence] in persistence?.flushAtExit() } }
    }

    func unregister<Value>(_ persistence: StatePersistence<Value>) {
        _ = flushers.withLock { $0.removeValue(forKey: ObjectIdentifier(persistence)) }
    }

    func flushAll() {
        for flush in flushers.withLock({ Array($0.values) }) { flush() }
    }
}

/// Values that are `nil` are removed from storage instead of being written as `null`.
protocol OptionalValue {
    var isNil: Bool { get }
}

extension Optional: OptionalValue {
    var isNil: Bool { self == nil }
}
