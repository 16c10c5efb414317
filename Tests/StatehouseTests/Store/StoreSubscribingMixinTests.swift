import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// An object subscribing to stores through the `StoreSubscribing` mixin; counts the renders from each of two stores.
private final class DualSubscriber: StoreSubscribing {
    let fromFirst = SharedCounter()
    let fromSecond = SharedCounter()

    func rendered(from store: Int) {
        if store == 0 {
            fromFirst.increment()
        } else {
            fromSecond.increment()
        }
    }
}

@Suite("StoreSubscribing from several threads at once", .serialized)
struct StoreSubscribingMixinTests {
    /// Two threads subscribing one object to two stores at the same instant: the object keeps both subscriptions.
    @Test func twoThreadsSubscribingOneObjectToTwoStoresAtOnceKeepBoth() async {
        let rounds = 2_000
        let stores = [makeCounterStore(), makeCounterStore()]
        let viewers = (0..<rounds).map { _ in DualSubscriber() }
        let arrivals = SharedCounter()
        await onNewThreads(2) { thread in
            for round in 0..<rounds {
                // A barrier per round, so that both threads subscribe the round's fresh object at the same instant.
                arrivals.increment()
                spinWait(timeout: .seconds(2)) { arrivals.value >= 2 * (round + 1) }
                viewers[round].subscribe(stores[thread]) { viewer, _ in viewer.rendered(from: thread) }
            }
        }
        // Each subscription rendered once when made; one dispatch to each store renders once more where it stayed.
        for store in stores { store.dispatch(.increment) }
        let lost = viewers.filter { $0.fromFirst.value < 2 || $0.fromSecond.value < 2 }.count
        #expect(lost == 0, "\(lost) of \(rounds) objects lost a subscription")
        withExtendedLifetime(viewers) {}
    }
}
