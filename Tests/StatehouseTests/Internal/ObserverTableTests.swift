import Testing
@testable import Statehouse

/// `ObserverTable.remove` checks that the slot still holds the subscription asking: a slot is reused once freed, and
/// a removal must never take another subscription's entry.
@Suite("ObserverTable: removal by slot")
struct ObserverTableTests {
    private func entry(_ subscription: Subscription) -> ObserverTable<Int>.Entry {
        ObserverTable.Entry(subscription: subscription, body: { _ in })
    }

    @Test func removingTakesTheEntryOnceAndFreesItsSlot() {
        var table = ObserverTable<Int>()
        let subscription = Subscription()
        table.insert(entry(subscription), at: table.nextSlot)
        #expect(table.remove(subscription, at: 0)?.subscription === subscription)
        #expect(table.remove(subscription, at: 0) == nil)
        #expect(table.isEmpty)
        #expect(table.nextSlot == 0)
    }

    @Test func anotherSubscriptionsSlotIsLeftAlone() {
        var table = ObserverTable<Int>()
        let first = Subscription()
        let second = Subscription()
        table.insert(entry(first), at: table.nextSlot)
        table.insert(entry(second), at: table.nextSlot)
        #expect(table.remove(second, at: 0) == nil)
        #expect(table.remove(first, at: 1) == nil)
        #expect(table.remove(first, at: 7) == nil)
        #expect(table.count == 2)
        #expect(table.entries[0]?.subscription === first && table.entries[1]?.subscription === second)
    }

    @Test func aSlotReusedByALaterSubscriptionIsNotTakenByTheOneThatLeftIt() {
        var table = ObserverTable<Int>()
        let leaving = Subscription()
        table.insert(entry(leaving), at: table.nextSlot)
        _ = table.remove(leaving, at: 0)
        let later = Subscription()
        table.insert(entry(later), at: table.nextSlot)
        #expect(table.remove(leaving, at: 0) == nil)
        #expect(table.entries[0]?.subscription === later)
    }
}
