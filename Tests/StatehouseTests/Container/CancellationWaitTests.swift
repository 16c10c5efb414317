import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Once `cancel()` returns, no call of the listener is still running on another thread; a listener table emptied by a
/// burst of cancellations gives its memory back. Serialized: one test blocks a thread.
@Suite("Cancellation waits for a call in progress", .serialized)
struct CancellationWaitTests {
    @Test func cancelReturnsOnlyAfterACallRunningOnAnotherThreadEnds() {
        let count = StateContainer(0, key: "cancelWait.longCall")
        let inCall = DispatchSemaphore(value: 0)
        let callEnded = Atomic<Bool>(false)
        let token = count.observe { _ in
            inCall.signal()
            usleep(50_000)
            callEnded.store(true, ordering: .sequentiallyConsistent)
        }
        DispatchQueue.global().async { count.modify(1) }
        inCall.wait()
        token.cancel()
        let endedBeforeCancelReturned = callEnded.load(ordering: .sequentiallyConsistent)
        #expect(endedBeforeCancelReturned)
    }

    @Test func tableThatEmptiesAfterABurstIsCompacted() {
        let count = StateContainer(0, key: "cancelWait.compaction")
        let tokens = (0..<1_000).map { _ in count.observe { _ in } }
        tokens.forEach { $0.cancel() }
        #expect(count.locked { $0.observers.entries.isEmpty })
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        count.modify(1)
        #expect(seen.elements == [1])
        #expect(count.locked { $0.observers.entries.count } == 1)
        token.cancel()
    }
}
