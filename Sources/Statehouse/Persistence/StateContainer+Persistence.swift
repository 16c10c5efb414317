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
    ///   (`<key>.undecodable.<milliseconds>-<random>`), and ``storageError`` says so. If they cannot be kept aside, or
    ///   the storage cannot be read, the container does not write either, so it never overwrites data it did not read.
    /// - Changes are written as `writes` says: coalesced by default (see ``WritePolicy``). ``flush()`` writes now;
    ///   deallocation and a normal exit write what is pending.
    /// - A failed write is reported through ``storageError``, the value in memory stays, and the next change or
    ///   `flush()` tries again.
    /// - Bytes another process stores that do not decode (or do not authenticate) are kept aside the same way. While
    ///   they cannot be, no write replaces them: each write first tries again to keep them aside, and until that
    ///   works it is refused with a `StorageError` of their kind (``StorageError/Kind/undecodable`` or
    ///   ``StorageError/Kind/authenticationFailed``, ``StorageError/keptAside`` `nil`), reported through
    ///   ``storageError`` and thrown by ``flush()``; the change stays in memory. Writes go on once the bytes are
    ///   kept aside or another process replaced them.
    ///
    /// - Parameters:
    ///   - defaultValue: The value when nothing (decodable) is stored.
    ///   - key: The state's name, and its entry in `storage`.
    ///   - storage: Where the value lives.
    ///   - writes: When changes are written.
    ///   - externalChanges: On a ``ChangeDetectingStorage`` (files, SQLite), whether and how to follow changes
    ///     others made, to reload and notify the listeners. By default the storage says when they happen
    ///     (``ExternalChanges/watch``), with a poll every 5 seconds as the safety net.
    public convenience init(
        _ defaultValue: Value,
        key: String,
        storage: some StateStorage,
        writes: WritePolicy = .coalesced,
        externalChanges: ExternalChanges = .watch
    ) {
        self.init(
            defaultValue, key: key, storage: storage, codec: .json, writes: writes, externalChanges: externalChanges
        )
    }
}

extension StateContainer {
    /// The wiring every persisted container shares; `clock` times coalesced writes and outside-change checks.
    convenience init(
        _ defaultValue: Value,
        key: String,
        storage: some StateStorage,
        codec: StateCodec<Value>,
        writes: WritePolicy,
        externalChanges: ExternalChanges,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        let (value, persistence) = StatePersistence.load(
            key: key, storage: storage, default: defaultValue, codec: codec, writes: writes,
            externalChanges: externalChanges, clock: clock
        )
        self.init(value, key: key, persistence: persistence)
        persistence.start(owner: self)
    }

    /// `update` on a ``TransactionalStorage``: starts from the stored value and stores the result in one transaction,
    /// so that updates from other processes are never lost. A local change not yet written is newer than the stored
    /// value: then the update starts from the value in memory.
    ///
    /// Each attempt runs `body` on a copy, under the lock (so that the value it starts from, and whether a local
    /// change is pending, are one step); the container takes the result only once it is stored, and only if it did
    /// not change since that attempt began. A change made meanwhile (a `modify` while the answer was committed) came
    /// after the update, replaces its result and is written over it. So listeners hear of the stored value only, and
    /// a failed transaction leaves nothing to undo.
    ///
    /// - Returns: What the body returned in the attempt that was stored, else in the last one (the container is then
    ///   unchanged, and `storageError` says why); with no attempt at all (every transaction failed before asking),
    ///   what it returns on the value in memory, which is not kept.
    @usableFromInline
    func updateInTransaction<Result: Sendable, Failure: Error>(
        _ body: (inout Value) throws(Failure) -> Result,
        _ persistence: any Persisting<Value>
    ) -> (Swift.Result<Result, Failure>, DeliveryRound<Value>?) {
        var last: (result: Swift.Result<Result, Failure>, value: Value, startCount: UInt64)?
        var round: DeliveryRound<Value>?
        // Let go when this returns: outside the lock, and before the caller delivers the change (see `modify(_:)`).
        var replaced: Value?
        defer { withExtendedLifetime(replaced) {} }
        persistence.updateInTransaction { stored in
            let attempt = locked(forUpdate: true) { state in
                let pending = persistence.transactionTryStarts(ownerCount: state.changeCount)
                var value = pending ? state.value : stored ?? state.value
                let result = whileUpdating { Swift.Result { () throws(Failure) in try body(&value) } }
                return (result: result, value: value, startCount: state.changeCount)
            }
            last = attempt
            return attempt.value
        } adopt: {
            guard let attempt = last else { return nil }
            return observation.changing {
                locked(forUpdate: true) { state -> PersistedSnapshot<Value>? in
                    guard state.changeCount == attempt.startCount else { return nil }
                    (round, replaced) = state.replace(with: attempt.value)
                    return PersistedSnapshot(value: state.value, count: state.changeCount)
                }
            }
        }
        if let last { return (last.result, round) }
        let result = locked(forUpdate: true) { state in
            var value = state.value
            return whileUpdating { Swift.Result { () throws(Failure) in try body(&value) } }
        }
        return (result, nil)
    }
}

extension StateContainer: PersistenceOwner {
    /// Reads through the link, never holding the container: a check that held it could hold its last reference, and
    /// the container would end on the writer, its key still taken by then (a new container of the key would be
    /// reported a duplicate) and its pending change written after that container had loaded.
    func changeCountReader() -> @Sendable () -> OwnerChangeCount {
        { [link] in
            link.state.withLockIfAvailable { state in state.map { .count($0.changeCount) } ?? .ended } ?? .busy
        }
    }

    /// Shows a value another process stored, if this container has not changed since `count`: listeners are told,
    /// nothing is written back.
    ///
    /// The persistence learns that the value is saved under the lock that counts it: in between, an `update`'s
    /// transaction would find the count past the one saved, take the value for a local change not yet written, and
    /// store its result made from it over whatever was stored since.
    func takeStoredValue(_ newValue: Value, ifUnchangedSince count: UInt64, refused: @escaping @Sendable () -> Void) {
        let round: DeliveryRound<Value>?
        do {
            let taken = observation.changing {
                link.state.withLock {
                    state -> (round: DeliveryRound<Value>?, replaced: Value, saved: PersistedSnapshot<Value>?)? in
                    guard state!.changeCount == count else { return nil }
                    let (round, replaced) = state!.replace(with: newValue)
                    state!.noteChangeFromStorage()
                    return (round, replaced, persistence?.tookStoredValue(newValue, count: state!.changeCount))
                }
            }
            guard let taken else { return refused() }
            round = taken.round
        }
        // The replaced value was let go at the end of that block: outside the lock, before the delivery (see
        // `modify(_:)`).
        if let round { deliver(round) }
    }
}

extension StateContainer {
    /// Writes unsaved changes to the storage now. Does nothing for a container without storage.
    ///
    /// Once it returns, ``storageError`` tells how the last write went, this one or one made just before.
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
