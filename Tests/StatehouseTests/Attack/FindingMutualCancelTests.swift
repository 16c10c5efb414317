// Findings of the adversarial review of issue 10's fix, kept as regression tests.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

private final class Tokens: Sendable {
    let a = Locked<SubscriptionToken?>(nil)
    let b = Locked<SubscriptionToken?>(nil)
}

/// Leaves two threads waiting for each other if it finds the bug.
@Suite(.serialized) struct FindingMutualCancelTests {
    /// Two listeners on a concurrent queue each cancel the other ("the first to answer wins"): each cancel() waits for
    /// the other's running call, which is itself waiting in cancel().
    @Test func twoQueuedListenersCancellingEachOther() {
        let queue = DispatchQueue(label: "review.concurrent", attributes: .concurrent)
        let container = StateContainer(0, key: "review.mutual.\(UUID().uuidString)")
        let tokens = Tokens()
        let finished = Atomic<Int>(0)
        let arrived = DispatchGroup()
        arrived.enter(); arrived.enter()
        tokens.a.withLock { $0 = container.observe(on: .queue(queue)) { _ in
            arrived.leave(); arrived.wait()                  // both calls are running now
            tokens.b.withLock { $0 }?.cancel()
            finished.add(1, ordering: .relaxed)
        } }
        tokens.b.withLock { $0 = container.observe(on: .queue(queue)) { _ in
            arrived.leave(); arrived.wait()
            tokens.a.withLock { $0 }?.cancel()
            finished.add(1, ordering: .relaxed)
        } }
        container.modify(1)
        let deadline = Date().addingTimeInterval(10)
        while finished.load(ordering: .relaxed) < 2 && Date() < deadline { usleep(10_000) }
        #expect(finished.load(ordering: .relaxed) == 2, "deadlock: each cancel() waits for the other's call")
    }
}
