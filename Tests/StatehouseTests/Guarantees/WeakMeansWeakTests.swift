import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// An object subscribing through the mixin; counts what it heard.
private final class Watcher: StoreSubscribing, Sendable {
    let heard: SharedCounter
    init(_ heard: SharedCounter) { self.heard = heard }
}

/// A view that renders nothing.
private final class SilentCountLabel: StatefulView {
    func render(state: Int) {}
}

/// Objects subscribing through `StoreSubscribing` are not retained by their subscriptions: after they die nothing is
/// delivered to them, and what their subscriptions held (the store too) is let go.
@Suite("Weak means weak: objects subscribing through the mixin are not retained", .serialized)
struct WeakMeansWeakTests {
    /// Objects subscribing through the mixin let go while dispatches flow: nothing is delivered to a gone object,
    /// and the store is let go once they are.
    @Test func storeSubscribingObjectsLetGoWhileDispatchesFlow() async {
        for round in 0..<40 {
            var store: Store<TwoCounters, TwoCountersAction>? = Store(initialState: TwoCounters(), reducer: twoCountersReducer)
            let weakStore = SharedWeak(store)
            let heard = SharedCounter()
            let watchers = SharedSlot<[Watcher]>()
            watchers.value = (0..<6).map { _ in Watcher(heard) }
            for watcher in watchers.value! {
                watcher.subscribe(store!) { watcher, _ in _ = watcher.heard.increment() }
            }
            let s = store!
            let go = DispatchSemaphore(value: 0)
            let dispatcher = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                for _ in 0..<100 { s.dispatch(.a) }
            }
            let releaser = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                watchers.value = nil
            }
            go.signal()
            go.signal()
            #expect(await waitOffThePool(for: dispatcher))
            #expect(await waitOffThePool(for: releaser))
            _ = consume s
            store!.dispatch(.a)
            store = nil
            let gone = await eventually(timeout: .seconds(signalPatience)) {
                _ = AssociatedObjectsTable.shared.releaseDeadOwners()
                return weakStore.object == nil
            }
            #expect(gone, "round \(round): the store outlived its mixin subscribers")
        }
    }

    /// A dead `StatefulView`'s subscription ends at the store's next change, even when its view state did not change
    /// (it is compared with `isDuplicate: ==`, so nothing is delivered): its closures, what they captured, and the
    /// store its token keeps alive are let go then, not whenever the associated-objects table happens to sweep.
    @Test func aDeadViewLetsGoOfItsStoreAtTheNextChangeThoughItsViewStateDidNotChange() {
        weak var weakStore: Store<Counter, CounterAction>?
        weak var weakSentinel: Witness?
        do {
            let store = makeCounterStore()
            weakStore = store
            do {
                let label = SilentCountLabel()
                let sentinel = Witness()
                weakSentinel = sentinel
                label.connect(to: store) { state in withExtendedLifetime(sentinel) { state.count } }
            }
            store.dispatch(.rename("not shown"))
            #expect(weakSentinel == nil, "the dead view's selector is still held")
            #expect(StoreSubscribingTests.hasNoSubscribers(store))
        }
        #expect(weakStore == nil, "the dead view's subscription keeps the store alive")
    }
}
