import Foundation

extension StateContainer where Value: Codable {
    /// Creates a container that loads its value from `storage` and saves every change back to it.
    ///
    /// ```swift
    /// let enabled = StateContainer(false, key: "isTouchIDEnabled", storage: .file(directory: url))
    /// let rating = StateContainer<Int?>(nil, key: "appRating", storage: .memory)   // nil removes the entry
    /// ```
    ///
    /// - The stored value under `key` is loaded now; with nothing stored, the container starts from `defaultValue`.
    /// - Stored bytes that do not decode (a corrupt file, a type that changed) are not fatal and not lost: the
    ///   container starts from `defaultValue`, the bytes are kept under a key of their own
    ///   (`<key>.undecodable.<milliseconds>`), and ``storageError`` says so. If they cannot be kept aside, or the
    ///   storage cannot be read, the container does not write either, so it never overwrites data it did not read.
    /// - Changes are written as `writes` says: coalesced by default (see ``WritePolicy``). ``flush()`` writes now;
    ///   deallocation and a normal exit write what is pending.
    /// - A failed write is reported through ``storageError``, the value in memory stays, and the next change or
    ///   `flush()` tries again.
    ///
    /// - Parameters:
    ///   - defaultValue: The value when nothing (decodable) is stored.
    ///   - key: The state's name, and its entry in `storage`.
    ///   - storage: Where the value lives.
    ///   - writes: When changes are written.
    ///   - externalChanges: On a ``ChangeDetectingStorage`` (files, SQLite), whether and how often to look for
    ///     changes others made, to reload and notify the listeners. Polls four times a second by default.
    public convenience init(
        _ defaultValue: Value,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .poll
    ) {
        self.init(
            defaultValue, key: key, storage: storage, writes: writes, externalChanges: externalChanges,
            decode: { try JSONDecoder().decode(Value.self, from: $0) },
            encode: { value in
                (value as? any OptionalValue)?.isNil == true ? nil : try JSONEncoder.statehouse.encode(value)
            }
        )
    }
}

extension StateContainer where Value: Codable {
    /// The wiring every persisted container shares: load with `decode`, write with `encode` (`nil`: remove).
    convenience init(
        _ defaultValue: Value,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy,
        externalChanges: ExternalChanges,
        decode: @escaping @Sendable (Data) throws -> Value,
        encode: @escaping @Sendable (Value) throws -> Data?
    ) {
        let loaded = LoadedValue(key: key, storage: storage, default: defaultValue, decode: decode)
        let persistence = StatePersistence<Value>(
            storage: storage, key: key, initialValue: loaded.value, policy: writes, canWrite: loaded.canWrite,
            externalChanges: externalChanges, decode: decode, encode: encode
        )
        self.init(loaded.value, key: key, persistence: persistence)
        persistence.attach(StatePersistence.Owner(
            changeCount: { [weak self] in self?.state.withLockIfAvailable { $0.changeCount } },
            takeStoredValue: { [weak self] value, count, refused in
                if self?.takeStoredValue(value, ifUnchangedSince: count) == false { refused() }
            }
        ))
        if let error = loaded.error { persistence.lastError.modify(error) }
    }
}

extension StateContainer {
    /// `update` on a ``TransactionalStorage``: starts from the stored value and stores the result in one transaction,
    /// so that updates from other processes are never lost. A local change not yet written is newer than the stored
    /// value: then the update starts from the value in memory. `nil` if the transaction could not run: the caller
    /// then updates in memory and leaves the write to be retried.
    @usableFromInline
    func updateInTransaction<Result: Sendable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result,
        _ persistence: StatePersistence<Value>
    ) -> (Swift.Result<Result, Failure>, DeliveryRound<Value>?)? {
        var outcome: (Swift.Result<Result, Failure>, DeliveryRound<Value>?)?
        let applied = persistence.updateInTransaction { stored in
            let (result, round, snapshot) = registrar.changing {
                locked(forUpdate: true) { state in
                    let pending = persistence.hasPendingChange(ownerCount: state.changeCount)
                    let (result, round) = whileUpdating { state.update(startingFrom: pending ? nil : stored, body) }
                    return (result, round, StatePersistence.Snapshot(value: state.value, count: state.changeCount))
                }
            }
            outcome = (result, round)
            return snapshot
        }
        return applied ? outcome : nil
    }

    /// Shows a value another process stored, if this container has not changed since `count` (a local change made
    /// meanwhile is newer, and wins): listeners are told, nothing is written back.
    /// - Returns: Whether the value was taken.
    @discardableResult
    func takeStoredValue(_ newValue: Value, ifUnchangedSince count: UInt64) -> Bool {
        let taken = registrar.changing {
            state.withLock { state -> (DeliveryRound<Value>?, UInt64)? in
                guard state.changeCount == count else { return nil }
                return (state.replace(with: newValue), state.changeCount)
            }
        }
        guard let (round, newCount) = taken else { return false }
        persistence?.tookStoredValue(newValue, count: newCount)
        if let round { deliver(round) }
        return true
    }
}

extension StateContainer {
    /// Writes unsaved changes to the storage now. Does nothing for a container without storage.
    ///
    /// - Throws: ``StorageError`` if the write failed; the changes stay unsaved and are tried again later.
    public func flush() throws(StorageError) {
        try persistence?.flush()
    }

    /// For a persisted container, the last storage failure (`nil` once a write succeeds), as a container to observe;
    /// `nil` for a container without storage.
    public var storageError: StateContainer<StorageError?>? {
        persistence?.lastError
    }
}

/// The value a persisted container starts from, and what went wrong getting it.
struct LoadedValue<Value: Codable> {
    var value: Value
    var error: StorageError?
    /// `false` when the stored data could neither be read nor kept aside: writing would destroy it.
    var canWrite = true

    /// Loads `key` from `storage`, decoding with `decode` (plain JSON by default).
    init(
        key: String,
        storage: some StateStorage,
        default defaultValue: Value,
        decode: (Data) throws -> Value = { try JSONDecoder().decode(Value.self, from: $0) }
    ) {
        value = defaultValue
        let data: Data
        do {
            guard let stored = try storage.load(key: key) else { return }
            data = stored
        } catch let error as StorageError where error.keptAside != nil {
            // The storage moved the bytes it could not use out of the way itself (sealed data that failed its
            // authentication, say): writing can no longer destroy them.
            self.error = error
            return
        } catch {
            self.error = StorageError(.io, key: key, operation: .load, message: """
                Could not read \(String(reflecting: key)): \(error). The container starts from its default and \
                will not write, so that it does not overwrite data it could not read. Fix the storage and restart.
                """, cause: error)
            canWrite = false
            return
        }
        do {
            value = try decode(data)
        } catch {
            let kept: String
            do {
                kept = "kept under \(String(reflecting: try storage.setAside(data, from: key)))"
            } catch {
                kept = "could not be kept aside (\(error)), so the container will not write over it"
                canWrite = false
            }
            self.error = StorageError(.undecodable, key: key, message: """
                The data stored under \(String(reflecting: key)) is not a \(Value.self): \(error). The container \
                starts from its default; the data was \(kept). Migrate or remove it.
                """)
        }
    }
}

extension JSONEncoder {
    /// Sorted keys, so that equal values give equal bytes.
    static var statehouse: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }
}
