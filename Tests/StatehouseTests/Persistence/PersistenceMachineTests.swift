import Testing
@testable import Statehouse

/// The decisions of persistence, with no threads, storage or clock: each test drives the machine step by step.
@Suite("Persistence state machine")
struct PersistenceMachineTests {
    typealias Machine = PersistenceMachine<Int>

    static func snapshot(_ value: Int, count: UInt64) -> PersistedSnapshot<Int> {
        PersistedSnapshot(value: value, count: count)
    }

    /// The value and number a write decision says to write; `nil` for any other decision.
    static func written(_ decision: Machine.Write) -> (value: Int, count: UInt64, number: UInt64)? {
        guard case .write(let snapshot, let number) = decision else { return nil }
        return (snapshot.value, snapshot.count, number)
    }

    @Test func aBurstOfChangesSchedulesOneWriteOfTheLatestValue() throws {
        var machine = Machine(initial: 0, policy: .coalesced(window: .milliseconds(50)), canWrite: true)
        #expect(machine.changed(Self.snapshot(1, count: 1)) == .schedule(window: .milliseconds(50)))
        for count in 2...100 {
            #expect(machine.changed(Self.snapshot(Int(count), count: UInt64(count))) == .nothing)
        }
        let write = try #require(Self.written(machine.scheduledWriteIsDue()))
        #expect(write.value == 100 && write.count == 100)
        machine.wrote(Self.snapshot(100, count: 100), fingerprint: nil)
        #expect(!machine.hasPendingChange(ownerCount: 100))
        // The next change starts the next burst.
        #expect(machine.changed(Self.snapshot(101, count: 101)) == .schedule(window: .milliseconds(50)))
    }

    @Test func writeThroughWritesEveryChange() throws {
        var machine = Machine(initial: 0, policy: .writeThrough, canWrite: true)
        for count in 1...3 {
            #expect(machine.changed(Self.snapshot(count * 10, count: UInt64(count))) == .writeNow)
            let write = try #require(Self.written(machine.nextWrite()))
            #expect(write.value == count * 10 && write.number == UInt64(count))
            machine.wrote(Self.snapshot(count * 10, count: UInt64(count)), fingerprint: nil)
        }
        #expect(Self.written(machine.nextWrite()) == nil)
    }

    @Test func anOlderReportArrivingLateNeverReplacesANewerOne() throws {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        _ = machine.changed(Self.snapshot(2, count: 2))
        _ = machine.changed(Self.snapshot(1, count: 1))  // reported after the owner's lock was released: out of order
        let write = try #require(Self.written(machine.scheduledWriteIsDue()))
        #expect(write.value == 2)
    }

    @Test func aFailedWriteLeavesTheChangePendingForTheNextAttempt() throws {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        _ = machine.changed(Self.snapshot(7, count: 1))
        let first = try #require(Self.written(machine.scheduledWriteIsDue()))
        // The storage failed: nothing is marked saved.
        #expect(machine.hasPendingChange(ownerCount: 1))
        let retry = try #require(Self.written(machine.nextWrite()))
        #expect(retry.value == 7 && retry.number > first.number)
    }

    @Test func nothingIsWrittenWhenNothingChanged() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        guard case .nothing = machine.nextWrite() else {
            Issue.record("wrote with no change")
            return
        }
    }

    @Test func aContainerThatCouldNotReadItsDataRefusesToWrite() {
        var machine = Machine(initial: 0, policy: .writeThrough, canWrite: false)
        _ = machine.changed(Self.snapshot(1, count: 1))
        guard case .refuse = machine.nextWrite() else {
            Issue.record("wrote over data it could not read")
            return
        }
    }

    @Test func anOlderWritesOutcomeIsNotPublishedAfterANewerOne() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        let published = [2, 1, 2, 3].map { machine.mayPublish(outcome: $0) }
        #expect(published == [true, false, false, true])
    }

    @Test func aValueTakenFromStorageIsSavedAlready() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        machine.tookStoredValue(Self.snapshot(5, count: 1))
        #expect(!machine.hasPendingChange(ownerCount: 1))
        guard case .nothing = machine.nextWrite() else {
            Issue.record("wrote back a value read from storage")
            return
        }
    }

    /// `shouldReload`, outside `#expect` (which cannot call a mutating method).
    func reload(_ machine: inout Machine, _ ownerCount: UInt64, _ fingerprint: StorageFingerprint) -> Bool {
        machine.shouldReload(ownerCount: ownerCount, fingerprint: fingerprint) == .go
    }

    @Test func anOutsideChangeIsReadOnceAndNotWhileALocalChangeIsPending() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        let ours = StorageFingerprint([1])
        let theirs = StorageFingerprint([2])
        machine.startsFollowing(from: ours)
        #expect(reload(&machine, 0, ours) == false)
        // A local change is pending: it is newer, and will overwrite what is stored.
        _ = machine.changed(Self.snapshot(1, count: 1))
        #expect(reload(&machine, 1, theirs) == false)
        machine.wrote(Self.snapshot(1, count: 1), fingerprint: ours)
        #expect(reload(&machine, 1, theirs) == true)
        #expect(reload(&machine, 1, theirs) == false)
    }

    @Test func aCheckWhoseOwnerCountFellBehindWhatIsSavedChecksAgain() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        let theirs = StorageFingerprint([2])
        // A value an earlier check handed over landed after this check read the owner's count (0).
        machine.tookStoredValue(Self.snapshot(1, count: 1))
        let worthReading = machine.isWorthReading(ownerCount: 0, fingerprint: theirs)
        #expect(worthReading == .again)
        let reloads = machine.shouldReload(ownerCount: 0, fingerprint: theirs)
        #expect(reloads == .again)
        // Asked again, the check reads the count as it is now.
        let now = machine.shouldReload(ownerCount: 1, fingerprint: theirs)
        #expect(now == .go)
        // A local change past what is saved is pending: it wins, and nothing is asked again.
        _ = machine.changed(Self.snapshot(5, count: 2))
        let pending = machine.shouldReload(ownerCount: 2, fingerprint: StorageFingerprint([3]))
        #expect(pending == .stop)
    }

    @Test func aRefusedOutsideValueIsReadAgainUnlessAWriteReplacedIt() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        let theirs = StorageFingerprint([2])
        #expect(reload(&machine, 0, theirs) == true)
        machine.refused(theirs)
        #expect(reload(&machine, 0, theirs) == true)
        // This time a write of ours landed before the refusal was handled: the refusal does not forget ours.
        let ours = StorageFingerprint([3])
        _ = machine.changed(Self.snapshot(1, count: 1))
        machine.wrote(Self.snapshot(1, count: 1), fingerprint: ours)
        machine.refused(theirs)
        #expect(reload(&machine, 1, ours) == false)
    }

    /// A write looks for bytes another process stored unseen when the key may hold some: after a refused value was
    /// forgotten, or when the key's fingerprint cannot be read or differs from what this process last read or
    /// wrote; not before the first read (the load looked at the bytes itself), nor after a transaction whose outcome
    /// is unknown (its transform did). Bytes a write kept aside count as seen.
    @Test func aWriteLooksForUnseenBytesOnlyWhenTheKeyMayHoldSome() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        let theirs = StorageFingerprint([2])
        let ours = StorageFingerprint([3])
        #expect(machine.seen == .noFingerprint)
        #expect(!machine.seen.isUnseen(theirs))
        #expect(!machine.seen.isUnseen(nil))

        #expect(reload(&machine, 0, theirs) == true)
        #expect(machine.seen == .fingerprint(theirs))
        #expect(!machine.seen.isUnseen(theirs))
        #expect(machine.seen.isUnseen(ours))
        #expect(machine.seen.isUnseen(nil), "a fingerprint that cannot be read is no proof of anything")

        machine.refused(StorageFingerprint([9]))
        #expect(machine.seen == .fingerprint(theirs), "a refusal of other bytes forgets nothing")
        machine.refused(theirs)
        #expect(machine.seen == .forgotten)
        #expect(machine.seen.isUnseen(theirs))
        #expect(machine.seen.isUnseen(nil))

        machine.keptAside(nil)
        #expect(machine.seen == .forgotten, "bytes whose fingerprint is unknown are still to look at")
        machine.keptAside(theirs)
        #expect(machine.seen == .fingerprint(theirs))

        _ = machine.changed(Self.snapshot(1, count: 1))
        machine.wrote(Self.snapshot(1, count: 1), fingerprint: ours)
        #expect(machine.seen == .fingerprint(ours))

        machine.refused(ours)
        _ = machine.beginTransaction()
        machine.transactionFailed(outcomeUnknown: true)
        #expect(machine.seen == .noFingerprint)
        _ = machine.beginTransaction()
        machine.transactionCommitted(adopted: nil, fingerprint: ours)
        #expect(machine.seen == .fingerprint(ours))
    }

    @Test func aCommittedTransactionMarksTheAdoptedValueSaved() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        _ = machine.beginTransaction()
        #expect(machine.inTransaction)
        machine.transactionCommitted(adopted: Self.snapshot(1, count: 1), fingerprint: StorageFingerprint([1]))
        #expect(!machine.inTransaction)
        #expect(!machine.hasPendingChange(ownerCount: 1))
        let worthReading = machine.isWorthReading(ownerCount: 1, fingerprint: StorageFingerprint([1]))
        #expect(worthReading == .stop)
    }

    @Test func aChangeMadeWhileTheTransactionCommittedStaysPendingAndIsWrittenOverIt() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        _ = machine.beginTransaction()
        _ = machine.changed(Self.snapshot(100, count: 1))  // a modify, while the update's answer was committed
        machine.transactionCommitted(adopted: nil, fingerprint: StorageFingerprint([1]))
        guard case .write(let snapshot, _) = machine.nextWrite() else {
            Issue.record("the newer change is not written")
            return
        }
        #expect(snapshot.value == 100)
    }

    @Test func aFailedTransactionLeavesNothingPending() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        machine.startsFollowing(from: StorageFingerprint([1]))
        _ = machine.beginTransaction()
        machine.transactionFailed(outcomeUnknown: false)
        #expect(!machine.inTransaction)
        #expect(!machine.hasPendingChange(ownerCount: 0))
        guard case .nothing = machine.nextWrite() else {
            Issue.record("a failed update is written later")
            return
        }
        let worthReading = machine.isWorthReading(ownerCount: 0, fingerprint: StorageFingerprint([1]))
        #expect(worthReading == .stop)
    }

    @Test func aTransactionWhoseOutcomeIsUnknownMakesTheNextCheckReadTheKeyAgain() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        machine.startsFollowing(from: StorageFingerprint([1]))
        _ = machine.beginTransaction()
        machine.transactionFailed(outcomeUnknown: true)
        let worthReading = machine.isWorthReading(ownerCount: 0, fingerprint: StorageFingerprint([1]))
        #expect(worthReading == .go)
    }

    @Test func onlyIOFailuresWithAKnownOutcomeAreTriedAgainAFewTimesWithAGrowingBackoff() {
        let io = StorageError(.io, key: "k", operation: .transact, message: "lost")
        let delays = (1..<Machine.transactionAttempts).compactMap {
            Machine.retryDelay(afterFailedAttempts: $0, error: io, outcomeUnknown: false)
        }
        #expect(delays.count == Machine.transactionAttempts - 1)
        #expect(delays == delays.sorted() && delays.first! > .zero && delays.last! < .seconds(1))
        #expect(Machine.retryDelay(afterFailedAttempts: Machine.transactionAttempts, error: io, outcomeUnknown: false)
            == nil)
        #expect(Machine.retryDelay(afterFailedAttempts: 1, error: io, outcomeUnknown: true) == nil)
        let bad = StorageError(.unencodable, key: "k", operation: .encode, message: "no")
        #expect(Machine.retryDelay(afterFailedAttempts: 1, error: bad, outcomeUnknown: false) == nil)
    }

    // MARK: Following outside changes

    @Test func watchingIsUsedWhereTheStorageCanNotifyAndPollingAtTheOldRateElsewhere() {
        let watch = ExternalChanges.watch(safetyNet: .seconds(5))
        #expect(Machine.following(watch, canDetect: true, canNotify: true) == .watch(safetyNet: .seconds(5)))
        #expect(Machine.following(watch, canDetect: true, canNotify: false) == .poll(every: .milliseconds(250)))
        #expect(Machine.following(watch, canDetect: false, canNotify: false) == .none)
        // A safety net shorter than the polling rate is kept where watching is unavailable.
        let eager = ExternalChanges.watch(safetyNet: .milliseconds(20))
        #expect(Machine.following(eager, canDetect: true, canNotify: false) == .poll(every: .milliseconds(20)))
        #expect(Machine.following(.poll(every: .seconds(1)), canDetect: true, canNotify: true) == .poll(every: .seconds(1)))
        #expect(Machine.following(.ignore, canDetect: true, canNotify: true) == .none)
        #expect(ExternalChanges.watch == .watch(safetyNet: .seconds(5)))
    }

    @Test func aBurstOfNotificationsQueuesOneCheckAndOneMoreOnceItStarts() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        let burst = (0..<1_000).map { _ in machine.checkRequested() }
        #expect(burst == [true] + Array(repeating: false, count: 999))
        machine.checkStarts()
        // A change made while the check runs may have been missed by it: the next request queues another.
        let after = [machine.checkRequested(), machine.checkRequested()]
        #expect(after == [true, false])
    }

    @Test func aBusyOwnerIsAskedAgainSoonBackingOffUntilItAnswers() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        let delays = (0..<9).map { _ in machine.ownerWasBusy() }
        #expect(delays == [1, 2, 4, 8, 16, 32, 64, 64, 64].map { Duration.milliseconds($0) })
        _ = machine.isWorthReading(ownerCount: 0, fingerprint: StorageFingerprint([1]))
        let afterAnswer = machine.ownerWasBusy()
        #expect(afterAnswer == .milliseconds(1))
    }

    @Test func aFailedReadIsWithdrawnByTheNextCheckThatReadsAndBadDataOnlyOnceAValueIsTaken() {
        var machine = Machine(initial: 0, policy: .coalesced, canWrite: true)
        let unreadable = StorageError(.io, key: "k", operation: .load, message: "unreadable")
        let failed = machine.checkFailed(unreadable)
        let withdrawal = machine.checkSucceeded(tookValue: false)
        #expect((withdrawal ?? 0) > failed)
        #expect(machine.checkSucceeded(tookValue: true) == nil)

        let undecodable = StorageError(.undecodable, key: "k", operation: .decode, message: "not an Int")
        _ = machine.checkFailed(undecodable)
        #expect(machine.checkSucceeded(tookValue: false) == nil)
        #expect(machine.checkSucceeded(tookValue: true) != nil)
    }

    // MARK: Bad outside data not kept aside

    // Data another process stored that could be neither used nor kept aside holds writes back until it is kept aside
    // or replaced.

    static let notKept = [
        StorageError(.undecodable, key: "k", operation: .decode, message: "not an Int, not kept"),
        StorageError(.authenticationFailed, key: "k", operation: .load, message: "unauthentic, not kept"),
    ]

    @Test(arguments: notKept)
    func aWriteMustKeepTheDataAsideFirst(error: StorageError) {
        var machine = Machine(initial: 0, policy: .writeThrough, canWrite: true)
        _ = machine.checkFailed(error)
        _ = machine.changed(PersistedSnapshot(value: 1, count: 1))
        guard case .keepAsideFirst(let snapshot, _) = machine.nextWrite() else {
            Issue.record("a write may replace data that was neither used nor kept aside")
            return
        }
        #expect(snapshot.value == 1)
        // Still held: a check that does not read the key says nothing of those bytes, nor withdraws the report.
        let withdrawal = machine.checkSucceeded(tookValue: false)
        #expect(withdrawal == nil)
        guard case .keepAsideFirst = machine.nextWrite() else {
            Issue.record("the hold ended although the data is still there")
            return
        }
        machine.outsideDataIsSafe()
        guard case .write = machine.nextWrite() else {
            Issue.record("writes stay held once the data is kept aside")
            return
        }
    }

    @Test func otherBytesUnderTheKeyEndTheHold() {
        var machine = Machine(initial: 0, policy: .writeThrough, canWrite: true)
        _ = machine.checkFailed(Self.notKept[0])
        #expect(machine.unkeptOutsideData != nil)
        let reloads = machine.shouldReload(ownerCount: 0, fingerprint: StorageFingerprint([7]))
        #expect(reloads == .go)
        #expect(machine.unkeptOutsideData == nil)
    }

    @Test func badDataKeptAsideOrAFailedReadHoldsNothing() {
        var machine = Machine(initial: 0, policy: .writeThrough, canWrite: true)
        _ = machine.checkFailed(StorageError(.undecodable, key: "k", message: "kept", keptAside: "k.undecodable.1"))
        _ = machine.checkFailed(StorageError(.io, key: "k", operation: .load, message: "unreadable"))
        _ = machine.changed(PersistedSnapshot(value: 1, count: 1))
        guard case .write = machine.nextWrite() else {
            Issue.record("a write was held back although nothing unkept is stored")
            return
        }
    }
}
