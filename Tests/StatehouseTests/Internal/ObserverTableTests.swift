import Foundation
import Testing
@testable import Statehouse

/// `ObserverTable.remove` checks that the slot still holds the subscription asking: a slot is reused once freed, and
/// a removal must never take another subscription's entry.
@Suite("ObserverTable: removal by slot")
struct ObserverTableTests {
    private func entry(_ subscription: SubscriptionToken) -> ObserverTable<Int>.Entry {
        ObserverTable.Entry(subscription: subscription, body: { _ in })
    }

    @Test func removingTakesTheEntryOnceAndFreesItsSlot() {
        var table = ObserverTable<Int>()
        let subscription = SubscriptionToken()
        table.insert(entry(subscription), at: table.nextSlot)
        #expect(table.remove(subscription, at: 0)?.holds(subscription) == true)
        #expect(table.remove(subscription, at: 0) == nil)
        #expect(table.isEmpty)
        #expect(table.nextSlot == 0)
    }

    @Test func anotherSubscriptionsSlotIsLeftAlone() {
        var table = ObserverTable<Int>()
        let first = SubscriptionToken()
        let second = SubscriptionToken()
        table.insert(entry(first), at: table.nextSlot)
        table.insert(entry(second), at: table.nextSlot)
        #expect(table.remove(second, at: 0) == nil)
        #expect(table.remove(first, at: 1) == nil)
        #expect(table.remove(first, at: 7) == nil)
        #expect(table.count == 2)
        #expect(table.entries[0]?.holds(first) == true && table.entries[1]?.holds(second) == true)
    }

    @Test func aSlotReusedByALaterSubscriptionIsNotTakenByTheOneThatLeftIt() {
        var table = ObserverTable<Int>()
        let leaving = SubscriptionToken()
        table.insert(entry(leaving), at: table.nextSlot)
        _ = table.remove(leaving, at: 0)
        let later = SubscriptionToken()
        table.insert(entry(later), at: table.nextSlot)
        #expect(table.remove(leaving, at: 0) == nil)
        #expect(table.entries[0]?.holds(later) == true)
    }

    /// The entry reads its subscription's address from its `unowned(safe)` reference, never loading it: the layout
    /// it relies on (a native `unowned` reference is the object's address), and the 24 bytes that saves.
    @Test func anEntryReadsItsSubscriptionsAddressFromItsUnownedReference() {
        let subscription = SubscriptionToken()
        let entry = entry(subscription)
        #expect(entry.subscription.toOpaque() == Unmanaged.passUnretained(subscription).toOpaque())
        #expect(MemoryLayout<ObserverTable<Int>.Entry?>.size == 24)
        var table = ObserverTable<Int>()
        table.insert(entry, at: table.nextSlot)
        #expect(table.entries[0]?.subscription.toOpaque() == Unmanaged.passUnretained(subscription).toOpaque())
    }

    /// A copy of the entries, as a delivery round holds, outlives a token whose last reference went: the round can
    /// still ask the token's handshake, which says it was cancelled, and skips the listener.
    @Test func aRoundsEntryOutlivesItsTokenAndSkipsIt() {
        let container = StateContainer(0, key: "observerTable.outlives.\(UUID().uuidString)")
        let heard = Locked(0)
        var token: SubscriptionToken? = container.observe { _ in heard.withLock { $0 += 1 } }
        let round = container.link.state.withLock { $0!.observers.entries }
        weak let weakToken = token
        token = nil
        #expect(weakToken == nil)
        let entry = round[0]!
        #expect(!entry.mayBeLive)
        entry.deliver(1, on: currentThreadIdentity())
        #expect(heard.withLock { $0 } == 0)
    }
}
