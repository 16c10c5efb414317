import Testing
@testable import Statehouse

/// Data another process stored that could be neither used nor kept aside holds writes back, in the machine alone.
@Suite("Persistence state machine: bad outside data not kept aside")
struct PersistenceMachineKeepAsideTests {
    typealias Machine = PersistenceMachine<Int>

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
        #expect(reloads)
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
