import Dispatch
import Foundation
import Synchronization

/// Writes a container's value (or a store's state) to its storage, as its ``WritePolicy`` says, and reports
/// failures.
///
/// A change only marks the container dirty and, if no write is scheduled, schedules one: the writer encodes the
/// value current *when it writes*, so a burst of changes costs one encoding and one write. A write that fails leaves
/// the container dirty: the next change, `flush()`, deallocation or exit tries again.
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

    /// Tells the writer how to read the container's value; the container calls it once it exists.
    func attach(_ read: @escaping @Sendable () -> Value?) {
        currentValue.withLock { $0 = read }
        PendingWrites.shared.register(self)
    }

    /// The container's value changed.
    @usableFromInline
    func changed() {
        dirty.store(true, ordering: .sequentiallyConsistent)
        switch policy {
        case .writeThrough:
            _ = writer.sync { writeIfDirty(nil) }
        case .coalesced(let window):
            guard !scheduled.exchange(true, ordering: .sequentiallyConsistent) else { return }
            writer.asyncAfter(deadline: .now() + .nanoseconds(Int(window.components.seconds * 1_000_000_000
                + window.components.attoseconds / 1_000_000_000))) { [weak self] in
                guard let self else { return }
                scheduled.store(false, ordering: .sequentiallyConsistent)
                _ = writeIfDirty(nil)
            }
        }
    }

    /// Writes unsaved changes now; throws the failure.
    func flush() throws(StorageError) {
        if let error = writer.sync(execute: { writeIfDirty(nil) }) { throw error }
    }

    /// Writes `finalValue`, the value of a container that is going away, if it has unsaved changes.
    func flush(finalValue: Value) {
        if let error = writer.sync(execute: { writeIfDirty(finalValue) }) {
            StatehouseDiagnostics.report(.lostWrite(error))
        }
        PendingWrites.shared.unregister(self)
    }

    /// Writes at exit: the container may be gone; its last value was then written by `flush(finalValue:)`.
    func flushAtExit() {
        _ = writer.sync { writeIfDirty(nil) }
    }

    /// Runs on `writer`. Returns the failure, if any.
    private func writeIfDirty(_ given: Value?) -> StorageError? {
        guard dirty.exchange(false, ordering: .sequentiallyConsistent) else { return nil }
        guard canWrite else { return lastError.value }
        guard let value = given ?? currentValue.withLock({ $0 })?() else { return nil }
        do {
            if let data = try encode(value) {
                try storage.save(data, key: key)
            } else {
                try storage.remove(key: key)
            }
            if lastError.value != nil { lastError.modify(nil) }
            return nil
        } catch {
            dirty.store(true, ordering: .sequentiallyConsistent)
            let failure = error as? StorageError
                ?? StorageError(.io, key: key, message: "Could not save \(String(reflecting: key)): \(error).")
            lastError.modify(failure)
            return failure
        }
    }
}

/// The persisted containers with a writer, to flush at a normal exit of the process.
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
