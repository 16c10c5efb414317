import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A token combining several (what `recordChanges(to:on: .queue)` and StatehouseMetrics return) reports itself
/// cancelled once every part is, also when its container ends; letting it go cancels its parts.
@Suite("Combined tokens: cancelled once every part is", .serialized)
struct CombinedTokenTests {
    /// DESIGN / StateContainers.md: "When a container is deallocated, its async sequences finish and its tokens
    /// report isCancelled." A combined token of that container too, though nobody called its own `cancel()`: its
    /// parts are all cancelled.
    @Test func aCombinedTokenOfADeallocatedContainerReportsCancelled() {
        let queue = DispatchQueue(label: "merge.combined")
        var container: StateContainer<Int>? = StateContainer(0, key: "merge.combined.\(UUID().uuidString)")
        let parts = [container!.observe { _ in }, container!.observe(on: .queue(queue)) { _ in }]
        let combined = SubscriptionToken.combining(parts)
        container = nil
        let partsCancelled = parts.allSatisfy { $0.isCancelled }
        #expect(partsCancelled, "the parts know their container ended")
        #expect(combined.isCancelled, "the combined token of a deallocated container says it is live")
    }

    /// A combined token let go from inside one of its parts' calls: its `deinit` cancels the part it is called from
    /// (no wait) and the other; the round then walks past the parts' entries, calling neither again.
    @Test func aCombinedTokenLetGoInsideAPartsCall() {
        let c = StateContainer(0, key: "merge.combinedInside.\(UUID().uuidString)")
        let slot = SharedSlot<SubscriptionToken>()
        let heard = SharedCounter()
        let first = c.observe { value in
            _ = heard.increment()
            if value == 1 { slot.letGo() }
        }
        let second = c.observe { _ in _ = heard.increment() }
        slot.set(SubscriptionToken.combining([first, second]))
        let weakFirst = SharedWeak(first)
        _ = consume first
        _ = consume second
        c.modify(1)
        #expect(heard.value == 1, "the second part was called after the combined token's deinit in the same round")
        c.modify(2)
        #expect(heard.value == 1)
        #expect(weakFirst.object == nil)
    }

    /// Live while its container lives, cancelled once it ends; cancelling it again changes nothing.
    @Test func aCombinationIsCancelledOnceItsContainerEnds() {
        var container: StateContainer<Int>? = StateContainer(0, key: uniqueKey("combined.combined.end"))
        let combined = SubscriptionToken.combining([
            container!.observe { _ in },
            container!.observe(on: .queue(DispatchQueue(label: "combinedToken.combined"))) { _ in },
        ])
        #expect(!combined.isCancelled)
        container = nil
        #expect(combined.isCancelled)
        combined.cancel()
        #expect(combined.isCancelled)
    }

    /// A combination over two containers is live while one of them lives, and `cancel()` stops the live part.
    @Test func aCombinationOverTwoContainersIsLiveWhileOneLives() {
        var first: StateContainer<Int>? = StateContainer(0, key: uniqueKey("combined.combined.first"))
        let second = StateContainer(0, key: uniqueKey("combined.combined.second"))
        let heard = Recorder<Int>()
        let combined = SubscriptionToken.combining([first!.observe { _ in }, second.observe { heard.append($0) }])
        first = nil
        #expect(!combined.isCancelled)
        second.modify(1)
        combined.cancel()
        #expect(combined.isCancelled)
        second.modify(2)
        #expect(heard.elements == [1])
    }

    /// A combination of nothing is not cancelled until its `cancel()`, although all of its (zero) parts are.
    @Test func anEmptyCombinationIsNotCancelledBeforeCancel() {
        let combined = SubscriptionToken.combining([])
        #expect(!combined.isCancelled, "a combination of nothing says it was cancelled before anyone cancelled it")
        combined.cancel()
        #expect(combined.isCancelled)
    }
}
