import Dispatch
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// `changeCount`: what a listener reads to count every change although its calls may be coalesced. Serialized: one
/// test blocks threads.
@Suite("StateContainer change count", .serialized)
struct ChangeCountTests {
    @Test func eachKindOfChangeCountsOne() {
        struct Refused: Error {}
        let count = StateContainer(0, key: "changeCount.kinds")
        #expect(count.changeCount == 0)
        count.modify(1)
        count ~> 2
        count.update { $0 += 1 }
        #expect(throws: Refused.self) {
            try count.update { (_: inout Int) throws(Refused) in throw Refused() }
        }
        count.didModify()
        #expect(count.changeCount == 5)
        count.takeStoredValue(9, ifUnchangedSince: 5) { Issue.record("the stored value was refused") }
        #expect(count.changeCount == 6)
        _ = count.value
        #expect(count.changeCount == 6)
    }

    @Test func countsEveryChangeFromManyThreads() async {
        let count = StateContainer(0, key: "changeCount.threads")
        await onNewThreads(8) { _ in
            for _ in 0..<10_000 { count.update { $0 += 1 } }
        }
        #expect(count.changeCount == 80_000)
    }

    @Test func aListenerCalledFewerTimesThanTheChangesReadsTheWholeCountInItsLastCall() async {
        let count = StateContainer(0, key: "changeCount.listener")
        let lastRead = Atomic<UInt64>(0)
        let calls = Atomic<Int>(0)
        let token = count.observe { [unowned count] _ in
            calls.add(1, ordering: .relaxed)
            lastRead.store(count.changeCount, ordering: .relaxed)
        }
        await onNewThreads(4) { _ in
            for _ in 0..<10_000 { count.update { $0 += 1 } }
        }
        #expect(await eventually { lastRead.load(ordering: .relaxed) == 40_000 })
        #expect(calls.load(ordering: .relaxed) <= 40_000)
        token.cancel()
    }
}
