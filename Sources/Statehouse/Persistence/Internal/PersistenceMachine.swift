/// The decisions of persistence, apart from its threads, locks, storage and clock: ``StatePersistence`` holds it
/// under a lock, calls it, and carries out what it returns.
///
/// The owner counts its changes under its own lock and reports each one with the value it produced; the newest
/// report is `latest`. `savedCount` is the count of the value the storage holds as far as this process knows
/// (written by us, or read from it). That gives one rule for "a local change is pending": the owner's count is past
/// `savedCount`.
///
/// Outcomes (of writes, of transactions, and of checks for outside changes that fail) are numbered, and so is the
/// outcome last published, so that a late failure never hides a later success. A success that would show nothing
/// new (nothing failed is showing, and no publication is under way) is claimed where it happens instead of being
/// published: the writer then needs no second trip through `lastError`.
///
/// Some state only the writer changes: ``knownFingerprint`` (what this process last read or wrote). The writer may
/// therefore take it with a decision and use it after releasing the lock; it is still current until the writer
/// itself changes it.
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
        /// Write `snapshot` once the data another process stored, which could be neither used nor kept aside, is
        /// kept aside or no longer there (``unkeptOutsideData``); until then, write nothing.
        case keepAsideFirst(Snapshot, number: UInt64)
    }

    /// What a check for an outside change does next.
    enum CheckStep: Equatable {
        /// Read the key, or take what was read.
        case go
        /// Nothing to take: the key holds what this process last read or wrote, or a local change is pending (it is
        /// newer, and will overwrite the stored value).
        case stop
        /// The owner's count the check read is stale: a value taken or a write ended since. Check again, or the
        /// change that asked for this check is left for the safety net.
        case again
    }

    let policy: WritePolicy
    /// `false` when the stored data could not be read or kept aside.
    let canWrite: Bool
    private(set) var latest: Snapshot
    private var savedCount: UInt64 = 0
    private var writeScheduled = false
    /// The fingerprint of what this process last read or wrote. Changed only on the writer.
    private(set) var knownFingerprint: StorageFingerprint?
    /// Whether ``knownFingerprint`` was forgotten because a value read was refused: the key may hold bytes this
    /// process never saw, unlike a key it has not read yet. Changed only on the writer.
    private var forgotWhatItSaw = false
    private var lastOutcomeNumber: UInt64 = 0
    private var publishedOutcomeNumber: UInt64 = 0
    /// Whether the outcome published last is a check's failure, which a later check that reads the key withdraws.
    private var publishedIsCheckFailure = false
    /// Check failures numbered up to this were withdrawn: one still on its way to being published never is.
    private var checkFailuresWithdrawnThrough: UInt64 = 0
    /// Whether what was last published (or the load's error, before anything was) is a failure: `lastError` is not
    /// `nil`, as far as persistence made it so.
    private var showsFailure: Bool
    /// Publications allowed by ``mayPublish(outcome:isCheckFailure:isFailure:)`` or ``mayWithdraw(through:)`` whose
    /// value `lastError` may not hold yet: until they end, a success cannot be claimed without publishing it.
    private var publishing = 0
    /// The outcome of the writer's last write (a turn that found nothing to write is not one): a flush that finds
    /// nothing to write publishes it, if nothing published it yet (see ``flushes()``).
    private var lastWrite: PersistenceOutcome?
    /// Whether a try of a transaction is running the owner's `update` body, on the writer.
    private(set) var inTransaction = false
    /// The number of the outcome of the transaction's try running (or last run) the owner's `update` body.
    private var transactionNumber: UInt64 = 0
    /// Whether a check for an outside change is queued on the writer and has not started yet.
    private var checkQueued = false
    /// How many checks in a row found the owner's lock held.
    private var busyChecks = 0
    /// What the last check that failed reported, until a check gets past it.
    private var checkFailure: StorageError?
    /// Why the key holds data another process stored that could be neither used (undecodable, unauthentic) nor kept
    /// aside: no write may replace it until a copy is kept, or the key holds something else.
    private(set) var unkeptOutsideData: StorageError?

    /// - Parameter showsFailure: Whether `lastError` starts with the load's error.
    init(initial: Value, policy: WritePolicy, canWrite: Bool, showsFailure: Bool = false) {
        self.latest = Snapshot(value: initial, count: 0)
        self.policy = policy
        self.canWrite = canWrite
        self.showsFailure = showsFailure
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
        lastOutcomeNumber += 1
        guard canWrite else { return .refuse(number: lastOutcomeNumber) }
        guard unkeptOutsideData == nil else { return .keepAsideFirst(latest, number: lastOutcomeNumber) }
        return .write(latest, number: lastOutcomeNumber)
    }

    /// A flush's turn on the writer: what to write, and, when nothing is pending, the last write's outcome if it may
    /// not be published yet (the flush publishes it before it returns, so that `lastError` tells how the last write
    /// went, whoever made it).
    mutating func flushes() -> (write: Write, unpublished: PersistenceOutcome?) {
        let write = nextWrite()
        guard case .nothing = write, let lastWrite, publishing > 0 || lastWrite.number > publishedOutcomeNumber else {
            return (write, nil)
        }
        return (write, lastWrite)
    }

    /// What this process knows of the bytes the key holds, taken with a write's decision (see
    /// ``SeenData/isUnseen(_:)``).
    var seen: SeenData {
        if forgotWhatItSaw { return .forgotten }
        return knownFingerprint.map(SeenData.fingerprint) ?? .noFingerprint
    }

    /// What a write knows of the bytes the key holds: whether another process may have stored some it never saw.
    enum SeenData: Equatable, Sendable {
        /// No fingerprint, and nothing to look for: nothing was read or written since the load (which looked at
        /// the bytes itself, and kept bad ones aside), or the last transaction's outcome is unknown (its transform
        /// saw the bytes, and kept bad ones aside).
        case noFingerprint
        /// What this process last read or wrote.
        case fingerprint(StorageFingerprint)
        /// What it last read was refused and forgotten: any bytes the key holds may be unseen.
        case forgotten

        /// Whether the key's data, whose fingerprint is `now` (`nil`: it could not be read), may be other than what
        /// this process last read or wrote: another process stored it since. Not knowing counts as unseen.
        func isUnseen(_ now: StorageFingerprint?) -> Bool {
            switch self {
            case .noFingerprint: false
            case .fingerprint(let known): known != now
            case .forgotten: true
            }
        }
    }

    /// A write kept the bytes the key holds (`fingerprint`, if it could be read) aside before replacing them: they
    /// count as seen, so that a retry of the write, after its save failed, keeps no second copy.
    mutating func keptAside(_ fingerprint: StorageFingerprint?) {
        if let fingerprint { saw(fingerprint) }
    }

    /// Forgets what this process last read, so that the next check reads the key again and the next write looks at
    /// what it holds.
    private mutating func forgetWhatItSaw() {
        knownFingerprint = nil
        forgotWhatItSaw = true
    }

    /// Remembers `fingerprint` as what this process last read or wrote.
    private mutating func saw(_ fingerprint: StorageFingerprint?) {
        knownFingerprint = fingerprint
        forgotWhatItSaw = false
    }

    /// A write found data another process stored that could be neither used nor kept aside, for the reason `error`
    /// gives: no write may replace it until a copy is kept, or the key holds something else.
    mutating func holdWrites(_ error: StorageError) {
        unkeptOutsideData = error
    }

    /// The data ``unkeptOutsideData`` is about is kept aside now, or the key no longer holds it: writes may go on.
    mutating func outsideDataIsSafe() {
        unkeptOutsideData = nil
    }

    /// `snapshot` is stored, and the storage now holds what `fingerprint` says (`nil`: unknown).
    mutating func wrote(_ snapshot: Snapshot, fingerprint: StorageFingerprint?) {
        if let fingerprint { saw(fingerprint) }
        markSaved(snapshot.count)
    }

    /// The writer's write ended with `outcome` (of a write it was given: `.written` or `.failed`); after a success,
    /// ``wrote(_:fingerprint:)`` was called first, under the same lock. Returns whether to publish the outcome (see
    /// ``claimsQuietly(_:errorShows:)``).
    mutating func writeEnded(_ outcome: PersistenceOutcome, errorShows: Bool) -> Bool {
        lastWrite = outcome
        return !claimsQuietly(outcome, errorShows: errorShows)
    }

    // MARK: Publishing outcomes

    /// Whether the outcome numbered `number` may be published: no later outcome was, and, for a check's failure,
    /// no later check withdrew it. `isFailure`: the outcome is a failure (a check's always is). Once this says yes,
    /// the publication is under way until ``publicationEnded()``.
    mutating func mayPublish(outcome number: UInt64, isCheckFailure: Bool = false, isFailure: Bool = false) -> Bool {
        guard number > publishedOutcomeNumber, !isCheckFailure || number > checkFailuresWithdrawnThrough else {
            return false
        }
        publishedOutcomeNumber = number
        publishedIsCheckFailure = isCheckFailure
        showsFailure = isFailure || isCheckFailure
        publishing += 1
        return true
    }

    /// A publication that ``mayPublish(outcome:isCheckFailure:isFailure:)`` or ``mayWithdraw(through:)`` allowed
    /// is over: `lastError` holds its value.
    mutating func publicationEnded() {
        publishing -= 1
    }

    /// Claims a success without publishing it, when publishing it would change nothing: no failure shows, and none
    /// is on its way to showing (a publication under way may be one). A failure numbered before it, published
    /// later, is then refused as it would be after the success was published. Returns whether it claimed (or
    /// needs nothing: a later outcome was published already); `false` means: publish it.
    ///
    /// `errorShows` is whether `lastError` held a value just before: one the app set there itself, which
    /// persistence did not publish, is cleared by a success as a failure is.
    mutating func claimsQuietly(_ outcome: PersistenceOutcome, errorShows: Bool) -> Bool {
        guard case .written(let number) = outcome, !showsFailure, !errorShows, publishing == 0 else { return false }
        if number > publishedOutcomeNumber {
            publishedOutcomeNumber = number
            publishedIsCheckFailure = false
        }
        return true
    }

    /// The check numbered `number` read the key: the check failures before it no longer hold, whatever order their
    /// reports arrive in. Returns whether the outcome published is one of them, to clear; the clearing is then under
    /// way until ``publicationEnded()``.
    ///
    /// It does not claim `number` as published: it says nothing about a write, and a write's failure published
    /// after it (an older write's, late) must still show.
    mutating func mayWithdraw(through number: UInt64) -> Bool {
        checkFailuresWithdrawnThrough = max(checkFailuresWithdrawnThrough, number)
        guard publishedIsCheckFailure, publishedOutcomeNumber < number else { return false }
        publishedIsCheckFailure = false
        showsFailure = false
        publishing += 1
        return true
    }

    // MARK: Transactions

    /// A try of an update's transaction runs the owner's `update` body, on the writer, under the owner's lock (see
    /// ``transactionTryStarts(ownerCount:)``): returns the number of its outcome, should it commit.
    @discardableResult
    mutating func beginTransaction() -> UInt64 {
        inTransaction = true
        lastOutcomeNumber += 1
        transactionNumber = lastOutcomeNumber
        return transactionNumber
    }

    /// A try of an update's transaction runs the owner's `update` body now, on the writer, under the owner's lock,
    /// whose change count is `count`: returns whether a local change is pending (the body then starts from the value
    /// in memory, which is newer than the stored one).
    mutating func transactionTryStarts(ownerCount count: UInt64) -> Bool {
        beginTransaction()
        return hasPendingChange(ownerCount: count)
    }

    /// How many transactions one update runs at most.
    static var transactionAttempts: Int { 6 }

    /// The update's transaction failed for the `attempts`-th time with `error`: how long to wait before running it
    /// again, or `nil` to give up. Only I/O failures may pass (a lost connection, another writer that got in
    /// between); an outcome that is unknown is never run again, since the first commit may have landed.
    static func retryDelay(afterFailedAttempts attempts: Int, error: StorageError, outcomeUnknown: Bool) -> Duration? {
        guard !outcomeUnknown, error.kind == .io, attempts < transactionAttempts else { return nil }
        return .milliseconds(5 << (attempts - 1))
    }

    /// A try of the update's transaction failed, and runs again after a backoff: the writer is let go meanwhile,
    /// and runs no update body.
    mutating func transactionTryFailed() {
        inTransaction = false
    }

    /// The update's transaction committed, and the storage holds what `fingerprint` says. `adopted` is the owner's
    /// snapshot of the stored value, `nil` if a change the owner made meanwhile superseded it: that change is
    /// pending, and written over it. Returns the number of the update's outcome: its try's.
    @discardableResult
    mutating func transactionCommitted(adopted: Snapshot?, fingerprint: StorageFingerprint) -> UInt64 {
        inTransaction = false
        saw(fingerprint)
        if let adopted {
            record(adopted)
            markSaved(adopted.count)
        }
        return transactionNumber
    }

    /// Every transaction of the update failed: the owner did not change. If the last one's outcome is unknown, its
    /// commit may have landed: the next check reads the key again, whatever it holds (a write need not look at it:
    /// the transaction's transform saw what the key held). `unkept` says why the key holds data another process
    /// stored that the transaction could neither use nor keep aside: then no write may replace it either (see
    /// ``Write/keepAsideFirst(_:number:)``), as after a check that found it. Returns the number of the update's
    /// outcome, taken now: the last try may have failed before its body ran, and outcomes numbered during the
    /// backoffs came before this one.
    @discardableResult
    mutating func transactionFailed(outcomeUnknown: Bool, unkept: StorageError? = nil) -> UInt64 {
        inTransaction = false
        if outcomeUnknown { saw(nil) }
        if let unkept { unkeptOutsideData = unkept }
        lastOutcomeNumber += 1
        return lastOutcomeNumber
    }

    // MARK: Outside changes

    /// How outside changes are followed.
    enum Following: Equatable {
        /// Not at all: the storage cannot tell, or the owner ignores them.
        case none
        /// Check every `interval`.
        case poll(every: Duration)
        /// Check when the storage says the key may have changed, and every `safetyNet`.
        case watch(safetyNet: Duration)
    }

    /// How to follow outside changes as `externalChanges` asks, on a storage that can detect them (`canDetect`)
    /// and say when they happen (`canNotify`).
    static func following(_ externalChanges: ExternalChanges, canDetect: Bool, canNotify: Bool) -> Following {
        guard canDetect else { return .none }
        switch externalChanges {
        case .ignore: return .none
        case .poll(let interval): return .poll(every: interval)
        case .watch(let safetyNet):
            return canNotify ? .watch(safetyNet: safetyNet) : .poll(every: pollingInstead(of: safetyNet))
        }
    }

    /// The interval to poll at where watching, with `safetyNet`, is unavailable or failed: that of
    /// ``ExternalChanges/poll``, or the safety net's if it is shorter.
    static func pollingInstead(of safetyNet: Duration) -> Duration {
        min(ExternalChanges.pollInterval, safetyNet)
    }

    /// A check is asked for (the storage's notification, a poll, a retry): whether to queue one on the writer.
    /// `false` while one is queued and has not started: it will see this change too, so a burst of notifications
    /// costs one check.
    mutating func checkRequested() -> Bool {
        guard !checkQueued else { return false }
        checkQueued = true
        return true
    }

    /// The queued check starts: a request from now on queues another, so that a change made during this check is
    /// not left for the safety net.
    mutating func checkStarts() {
        checkQueued = false
    }

    /// The check found the owner's lock held, and cannot wait for it on the writer: when to ask again. From 1 ms,
    /// doubling up to 64 ms while the owner stays busy.
    mutating func ownerWasBusy() -> Duration {
        defer { busyChecks += 1 }
        return .milliseconds(1 << min(busyChecks, 6))
    }

    /// The owner answered with its count: whether the storage's `fingerprint` may be a change worth reading. It is
    /// not what this process last read or wrote, and no local change is pending. Remembers nothing:
    /// ``shouldReload(ownerCount:fingerprint:)`` decides on the fingerprint of what was then read.
    mutating func isWorthReading(ownerCount: UInt64, fingerprint: StorageFingerprint) -> CheckStep {
        busyChecks = 0
        return step(ownerCount: ownerCount, fingerprint: fingerprint)
    }

    /// Whether to take what was read, whose fingerprint is `fingerprint`: it is not what this process last read or
    /// wrote, and no local change is pending (it is newer, and will overwrite the stored value). Remembers the
    /// fingerprint when it says ``CheckStep/go``.
    mutating func shouldReload(ownerCount: UInt64, fingerprint: StorageFingerprint) -> CheckStep {
        let next = step(ownerCount: ownerCount, fingerprint: fingerprint)
        guard next == .go else { return next }
        saw(fingerprint)
        // Other bytes than those that could not be kept: if they are bad too, the check fails and says so again.
        unkeptOutsideData = nil
        return .go
    }

    /// The owner's count decides first: past what is saved, a local change is pending; behind it, the count is
    /// stale. Counts only rise, and `savedCount` only takes counts the owner had, so a count behind it was read
    /// before a value an earlier check handed over landed (or before a write ended): the check knows nothing of the
    /// owner as it is now.
    private func step(ownerCount: UInt64, fingerprint: StorageFingerprint) -> CheckStep {
        if ownerCount < savedCount { return .again }
        guard !hasPendingChange(ownerCount: ownerCount), fingerprint != knownFingerprint else { return .stop }
        return .go
    }

    /// What the storage holds when following starts.
    mutating func startsFollowing(from fingerprint: StorageFingerprint?) {
        saw(fingerprint)
    }

    /// The check failed with `error`: returns the number of that outcome. If the key holds data that could be
    /// neither used nor kept aside, writes wait until it is (see ``Write/keepAsideFirst(_:number:)``).
    mutating func checkFailed(_ error: StorageError) -> UInt64 {
        checkFailure = error
        if error.keptAside == nil, error.kind == .undecodable || error.kind == .authenticationFailed {
            unkeptOutsideData = error
        }
        lastOutcomeNumber += 1
        return lastOutcomeNumber
    }

    /// A check read the key without failing; `tookValue` if it found a value to take. Returns the number of the
    /// withdrawal of the failures checks reported before (see ``mayWithdraw(through:)``), if there is one: a read
    /// failure is withdrawn once reading works, bad data once a value is taken (until then the key still holds it).
    mutating func checkSucceeded(tookValue: Bool) -> UInt64? {
        // Bad data not kept aside stays reported while it holds writes back, even to checks that do not read it.
        guard let failure = checkFailure, tookValue || (failure.kind != .undecodable && unkeptOutsideData == nil)
        else { return nil }
        checkFailure = nil
        lastOutcomeNumber += 1
        return lastOutcomeNumber
    }

    /// The owner refused the value read under `fingerprint` (it changed meanwhile): forget it, unless a write
    /// replaced it since, so that the next check reads the key again. Otherwise a newer outside value refused behind
    /// an older one would never be read.
    mutating func refused(_ fingerprint: StorageFingerprint) {
        if knownFingerprint == fingerprint { forgetWhatItSaw() }
    }
}

/// What a write attempt, a transaction or a check did; `number` orders the outcomes.
enum PersistenceOutcome: Sendable {
    case nothingToWrite
    case written(number: UInt64)
    case failed(StorageError, number: UInt64)
    /// A check for an outside change failed.
    case checkFailed(StorageError, number: UInt64)
    /// A check read the key: the failures checks reported before it no longer hold.
    case withdrawn(number: UInt64)

    /// The outcome's number; `0` for ``nothingToWrite``, which is never published.
    var number: UInt64 {
        switch self {
        case .nothingToWrite: 0
        case .written(let number), .failed(_, let number), .checkFailed(_, let number), .withdrawn(let number): number
        }
    }
}
