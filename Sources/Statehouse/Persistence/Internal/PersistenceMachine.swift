/// The decisions of persistence, apart from its threads, locks, storage and clock: ``StatePersistence`` holds it
/// under a lock, calls it, and carries out what it returns.
///
/// The owner counts its changes under its own lock and reports each one with the value it produced; the newest
/// report is `latest`. `savedCount` is the count of the value the storage holds as far as this process knows
/// (written by us, or read from it). That gives one rule for "a local change is pending": the owner's count is past
/// `savedCount`.
///
/// Writes are numbered, and so is the outcome last published, so that a late failure never hides a later success.
struct PersistenceMachine<Value: Sendable> {
    typealias Snapshot = PersistedSnapshot<Value>

    /// What to do after the owner changed.
    enum AfterChange: Equatable {
        /// A write is scheduled already; it will write this change too.
        case nothing
        /// Write now, before the change returns (write-through).
        case writeNow
        /// Schedule a write `window` from now (the first change of a burst).
        case schedule(window: Duration)
    }

    /// What the writer does now.
    enum Write {
        /// Nothing is pending.
        case nothing
        /// Write `snapshot`; `number` orders the outcome.
        case write(Snapshot, number: UInt64)
        /// A change is pending, but the stored data could not be read: writing would destroy it.
        case refuse(number: UInt64)
    }

    let policy: WritePolicy
    /// `false` when the stored data could not be read or kept aside.
    let canWrite: Bool
    private(set) var latest: Snapshot
    private var savedCount: UInt64 = 0
    private var writeScheduled = false
    /// The fingerprint of what this process last read or wrote.
    private var knownFingerprint: StorageFingerprint?
    private var lastWriteNumber: UInt64 = 0
    private var publishedWriteNumber: UInt64 = 0
    /// Whether a transaction is running the owner's `update` body, on the writer.
    private(set) var inTransaction = false

    init(initial: Value, policy: WritePolicy, canWrite: Bool) {
        self.latest = Snapshot(value: initial, count: 0)
        self.policy = policy
        self.canWrite = canWrite
    }

    func hasPendingChange(ownerCount count: UInt64) -> Bool {
        count != savedCount
    }

    // MARK: Changes

    mutating func changed(_ snapshot: Snapshot) -> AfterChange {
        record(snapshot)
        switch policy {
        case .writeThrough:
            return .writeNow
        case .coalesced(let window):
            if writeScheduled { return .nothing }
            writeScheduled = true
            return .schedule(window: window)
        }
    }

    mutating func tookStoredValue(_ snapshot: Snapshot) {
        record(snapshot)
        markSaved(snapshot.count)
    }

    /// Keeps `newer` unless a later change was recorded already.
    private mutating func record(_ newer: Snapshot) {
        if newer.count > latest.count { latest = newer }
    }

    private mutating func markSaved(_ count: UInt64) {
        savedCount = max(savedCount, count)
    }

    // MARK: Writes

    /// The scheduled write is due: the next change schedules another.
    mutating func scheduledWriteIsDue() -> Write {
        writeScheduled = false
        return nextWrite()
    }

    mutating func nextWrite() -> Write {
        guard hasPendingChange(ownerCount: latest.count) else { return .nothing }
        lastWriteNumber += 1
        return canWrite ? .write(latest, number: lastWriteNumber) : .refuse(number: lastWriteNumber)
    }

    /// `snapshot` is stored, and the storage now holds what `fingerprint` says (`nil`: unknown).
    mutating func wrote(_ snapshot: Snapshot, fingerprint: StorageFingerprint?) {
        if let fingerprint { knownFingerprint = fingerprint }
        markSaved(snapshot.count)
    }

    /// Whether the outcome of write `number` may be published: no later write's outcome was.
    mutating func mayPublish(write number: UInt64) -> Bool {
        guard number > publishedWriteNumber else { return false }
        publishedWriteNumber = number
        return true
    }

    // MARK: Transactions

    /// A transaction starts; returns its write number.
    mutating func beginTransaction() -> UInt64 {
        inTransaction = true
        lastWriteNumber += 1
        return lastWriteNumber
    }

    /// The transaction ended. `result` is what the owner's update produced (`nil` if it did not run); `fingerprint`
    /// what the storage holds after it, `nil` if the transaction failed: the change then stays pending.
    mutating func endTransaction(result: Snapshot?, fingerprint: StorageFingerprint?) {
        inTransaction = false
        guard let result else {
            if let fingerprint { knownFingerprint = fingerprint }
            return
        }
        record(result)
        if let fingerprint { wrote(result, fingerprint: fingerprint) }
    }

    // MARK: Outside changes

    /// Whether to read the key again: the storage's fingerprint is not what this process last read or wrote, and no
    /// local change is pending (it is newer, and will overwrite the stored value). Remembers the fingerprint.
    mutating func shouldReload(ownerCount: UInt64, fingerprint: StorageFingerprint) -> Bool {
        guard !hasPendingChange(ownerCount: ownerCount), fingerprint != knownFingerprint else { return false }
        knownFingerprint = fingerprint
        return true
    }

    /// What the storage holds when following starts.
    mutating func startsFollowing(from fingerprint: StorageFingerprint?) {
        knownFingerprint = fingerprint
    }

    /// The owner refused the value read under `fingerprint` (it changed meanwhile): forget it, unless a write
    /// replaced it since, so that the next check reads the key again. Otherwise a newer outside value refused behind
    /// an older one would never be read.
    mutating func refused(_ fingerprint: StorageFingerprint) {
        if knownFingerprint == fingerprint { knownFingerprint = nil }
    }
}
