import Dispatch
import Foundation
import Synchronization

/// Writes a container's value (or a store's state) to its storage, as its ``WritePolicy`` says, and reports
/// failures.
///
/// A change only marks the owner dirty and, if no write is scheduled, schedules one: the writer encodes the value
/// current *when it writes*, so a burst of changes costs one encoding and one write. A write that fails leaves the
/// owner dirty: the next change, `flush()`, deallocation or exit tries again.
///
/// Outcomes are published through `lastError` only off the writer queue: its listeners run synchronously and may
/// flush, which waits for the writer.
@usableFromInline
final class StatePersistence<Value: Sendable>: Sendable {
    let storage: any StateStorage
    /// `storage`, if it can tell its own writes from others'.
    private let changeDetecting: (any ChangeDetectingStorage)?
    /// `storage`, if `update` runs as a transaction on it.
    private let transactional: (any TransactionalStorage)?
    /// Whether the owner's `update` goes through ``updateInTransaction(_:)``.
    @usableFromInline let updatesInTransactions: Bool
    let key: String
    let policy: WritePolicy
    /// The last failure, or `nil` once a write succeeded: what the app observes.
    let lastError: StateContainer<StorageError?>

    private let encode: @Sendable (Value) throws -> Data?
    /// `false` when the stored data could not be read or kept aside: writing would destroy it.
    private let canWrite: Bool
    private let currentValue = Locked<(@Sendable () -> Value?)?>(nil)
    /// Following outside changes: how to decode stored data, how often to look, and the owner's way to take a value
    /// that came from outside (without writing it back).
    private let externalChanges: ExternalChanges
    private let decode: @Sendable (Data) throws -> Value
    private let takeOutsideValue = Locked<(@Sendable (Value) -> Void)?>(nil)
    /// The fingerprint of what this writer last read or wrote. Touched only on `writer`.
    private let knownFingerprint = Locked<StorageFingerprint?>(nil)
    private let poller = Locked<PollTimer?>(nil)
    /// Applies outside values in order, off `writer` (their listeners may flush).
    private let applier: DispatchQueue
    private let dirty = Atomic<Bool>(false)
    private let scheduled = Atomic<Bool>(false)
    /// Serializes writes, so that an older value never lands after a newer one.
    private let writer: DispatchQueue

    init(
        storage: any StateStorage,
        key: String,
        policy: WritePolicy,
        canWrite: Bool,
        externalChanges: ExternalChanges = .ignore,
        decode: @escaping @Sendable (Data) throws -> Value = { _ in throw CancellationError() },
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
        self.lastError = StateContainer(nil, key: KeyRegistry.shared.uniqueKey(prefix: "\(key).storageError"))
        self.writer = DispatchQueue(label: "Statehouse.persistence.\(key)")
        self.applier = DispatchQueue(label: "Statehouse.persistence.\(key).outside")
    }

    /// Tells the writer how to read the owner's value, and (to follow outside changes) how to give it a value that
    /// came from outside; the owner calls it once it exists.
    func attach(_ read: @escaping @Sendable () -> Value?, takeOutsideValue: (@Sendable (Value) -> Void)? = nil) {
        currentValue.withLock { $0 = read }
        PendingWrites.shared.register(self)
        guard let takeOutsideValue, case .poll(let interval) = externalChanges, let storage = changeDetecting else {
            return
        }
        self.takeOutsideValue.withLock { $0 = takeOutsideValue }
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

    /// Runs on `writer`: reloads the key if someone else changed it, unless local changes are waiting to be written
    /// (they win, and will overwrite it).
    private func checkForOutsideChange(in storage: any ChangeDetectingStorage) {
        guard !dirty.load(ordering: .sequentiallyConsistent),
            let fingerprint = try? storage.fingerprint(key: key),
            fingerprint != knownFingerprint.withLock({ $0 })
        else { return }
        knownFingerprint.withLock { $0 = fingerprint }
        guard let data = try? storage.load(key: key), let value = try? decode(data),
            let take = takeOutsideValue.withLock({ $0 })
        else { return }
        applier.async { take(value) }
    }

    /// The owner's value changed.
    @usableFromInline
    func changed() {
        dirty.store(true, ordering: .sequentiallyConsistent)
        switch policy {
        case .writeThrough:
            report(writer.sync { writeIfDirty(nil) })
        case .coalesced(let window):
            guard !scheduled.exchange(true, ordering: .sequentiallyConsistent) else { return }
            let delay = window.components.seconds * 1_000_000_000 + window.components.attoseconds / 1_000_000_000
            writer.asyncAfter(deadline: .now() + .nanoseconds(Int(delay))) { [weak self] in
                guard let self else { return }
                scheduled.store(false, ordering: .sequentiallyConsistent)
                let outcome = writeIfDirty(nil)
                DispatchQueue.global().async { self.report(outcome) }
            }
        }
    }

    /// Writes unsaved changes now; throws the failure.
    func flush() throws(StorageError) {
        let outcome = writer.sync { writeIfDirty(nil) }
        report(outcome)
        if case .failed(let error) = outcome { throw error }
    }

    /// Writes `finalValue`, the value of an owner that is going away, if it has unsaved changes.
    func flush(finalValue: Value) {
        poller.withLock { $0 }?.source.cancel()
        if case .failed(let error) = writer.sync(execute: { writeIfDirty(finalValue) }) {
            StatehouseDiagnostics.report(.lostWrite(error))
        }
        PendingWrites.shared.unregister(self)
    }

    /// Writes at exit: the owner may be gone; its last value was then written by `flush(finalValue:)`.
    func flushAtExit() {
        if case .failed(let error) = writer.sync(execute: { writeIfDirty(nil) }) {
            StatehouseDiagnostics.report(.lostWrite(error))
        }
    }

    /// What a write attempt did.
    private enum Outcome: Sendable {
        case nothingToWrite
        case written
        case failed(StorageError)
    }

    /// Runs on `writer`; publishes nothing itself (see ``report(_:)``).
    private func writeIfDirty(_ given: Value?) -> Outcome {
        guard dirty.exchange(false, ordering: .sequentiallyConsistent) else { return .nothingToWrite }
        guard canWrite else {
            dirty.store(true, ordering: .sequentiallyConsistent)
            return .failed(lastError.value ?? StorageError(
                .io, key: key, message: "Not writing \(String(reflecting: key)): its stored data could not be read."
            ))
        }
        guard let value = given ?? currentValue.withLock({ $0 })?() else { return .nothingToWrite }
        do {
            // Our own write is not an outside change: remember its fingerprint.
            let written: StorageFingerprint
            if let data = try encode(value) {
                if let changeDetecting {
                    written = try changeDetecting.saveReturningFingerprint(data, key: key)
                } else {
                    try storage.save(data, key: key)
                    return .written
                }
            } else {
                try storage.remove(key: key)
                written = .absent
            }
            knownFingerprint.withLock { $0 = written }
            return .written
        } catch {
            dirty.store(true, ordering: .sequentiallyConsistent)
            return .failed(storageError(error))
        }
    }

    /// Runs an update of the owner as one transaction of a ``TransactionalStorage``.
    ///
    /// `apply` gets the stored value to start from (`nil`: start from the value in memory, because local changes are
    /// waiting to be written, or nothing decodable is stored), changes the owner, and returns its new value, which is
    /// stored before the transaction ends. It runs on the writer, while the storage is locked.
    ///
    /// - Returns: `false` if `apply` did not run (the transaction could not start); the failure is reported.
    func updateInTransaction(_ apply: (_ stored: Value?) -> Value) -> Bool {
        guard let transactional else { return false }
        var applied = false
        let outcome: Outcome = writer.sync {
            let localChangesPending = dirty.exchange(false, ordering: .sequentiallyConsistent)
            do {
                let fingerprint = try transactional.transact(key: key) { data in
                    let stored = localChangesPending ? nil : data.flatMap { try? decode($0) }
                    let newValue = apply(stored)
                    applied = true
                    return try encode(newValue)
                }
                knownFingerprint.withLock { $0 = fingerprint }
                return .written
            } catch {
                dirty.store(true, ordering: .sequentiallyConsistent)
                return .failed(storageError(error))
            }
        }
        report(outcome)
        return applied
    }

    private func storageError(_ error: any Error) -> StorageError {
        error as? StorageError ?? StorageError(.io, key: key, message: "Could not save \(String(reflecting: key)): \(error).")
    }

    /// Publishes the outcome of a write through `lastError`. Never called on `writer`.
    private func report(_ outcome: Outcome) {
        switch outcome {
        case .nothingToWrite:
            break
        case .written:
            if lastError.value != nil { lastError.modify(nil) }
        case .failed(let error):
            if lastError.value != error { lastError.modify(error) }
        }
    }
}

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
