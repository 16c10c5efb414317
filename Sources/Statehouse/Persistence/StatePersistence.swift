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
    let key: String
    let policy: WritePolicy
    /// The last failure, or `nil` once a write succeeded: what the app observes.
    let lastError: StateContainer<StorageError?>

    private let encode: @Sendable (Value) throws -> Data?
    /// `false` when the stored data could not be read or kept aside: writing would destroy it.
    private let canWrite: Bool
    private let currentValue = Locked<(@Sendable () -> Value?)?>(nil)
    private let dirty = Atomic<Bool>(false)
    private let scheduled = Atomic<Bool>(false)
    /// Serializes writes, so that an older value never lands after a newer one.
    private let writer: DispatchQueue

    init(
        storage: any StateStorage,
        key: String,
        policy: WritePolicy,
        canWrite: Bool,
        encode: @escaping @Sendable (Value) throws -> Data?
    ) {
        self.storage = storage
        self.key = key
        self.policy = policy
        self.canWrite = canWrite
        self.encode = encode
        self.lastError = StateContainer(nil, key: KeyRegistry.shared.uniqueKey(prefix: "\(key).storageError"))
        self.writer = DispatchQueue(label: "Statehouse.persistence.\(key)")
    }

    /// Tells the writer how to read the owner's value; the owner calls it once it exists.
    func attach(_ read: @escaping @Sendable () -> Value?) {
        currentValue.withLock { $0 = read }
        PendingWrites.shared.register(self)
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
            if let data = try encode(value) {
                try storage.save(data, key: key)
            } else {
                try storage.remove(key: key)
            }
            return .written
        } catch {
            dirty.store(true, ordering: .sequentiallyConsistent)
            return .failed(error as? StorageError
                ?? StorageError(.io, key: key, message: "Could not save \(String(reflecting: key)): \(error)."))
        }
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
