import Dispatch
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// An object that subscribes and keeps nothing else.
private final class Subscriber: StoreSubscribing {}

/// A view that renders nothing.
private final class CountView: StatefulView {
    func render(state: Int) {}
}

@Suite("StoreSubscribing: a dead object's subscriptions")
struct StoreSubscribingTests {
    /// Whether `store` holds no subscriber any more.
    static func hasNoSubscribers<State, Action>(_ store: Store<State, Action>) -> Bool {
        store.core.withLock { $0.groups.compactMap { $0 }.allSatisfy { $0.subscribers.isEmpty } }
    }

    // A dead object's closure, and what it captured, must go at the store's next delivery, not only when the
    // associated-objects table releases the object's tokens (at a sweep, or when a new owner at the same address
    // touches its values). Tests running at the same time may do either first; alone, each test here needs the
    // delivery to let the closure go.
    @Test func theNextDeliveryAfterTheObjectDiesReleasesTheClosure() async {
        let store = makeCounterStore()
        let calls = Recorder<Int>()
        weak var weakSentinel: Witness?
        do {
            let subscriber = Subscriber()
            let sentinel = Witness()
            weakSentinel = sentinel
            subscriber.subscribe(store) { _, state in
                withExtendedLifetime(sentinel) { calls.append(state.count) }
            }
        }
        store.dispatch(.increment)
        #expect(await eventually { weakSentinel == nil })
        #expect(Self.hasNoSubscribers(store))
        #expect(calls.elements == [0])
    }

    @Test func aQueuedDeliveryAfterTheObjectDiesReleasesTheClosure() async {
        let store = makeCounterStore()
        let queue = DispatchQueue(label: "test.storeSubscribing.queue")
        weak var weakSentinel: Witness?
        do {
            let subscriber = Subscriber()
            let sentinel = Witness()
            weakSentinel = sentinel
            subscriber.subscribe(store, on: .queue(queue)) { _, _ in withExtendedLifetime(sentinel) {} }
            queue.sync {}
        }
        store.dispatch(.increment)
        #expect(await eventually { weakSentinel == nil })
        #expect(Self.hasNoSubscribers(store))
    }

    @Test func aDeadViewIsDisconnectedAtTheNextChange() async {
        let store = Store(initialState: 0) { (state: inout Int, action: Int) in state += action }
        do {
            let view = CountView()
            view.connect(to: store)
        }
        store.dispatch(1)
        #expect(await eventually { Self.hasNoSubscribers(store) })
    }

    @Test func aLiveObjectStaysSubscribed() {
        let store = makeCounterStore()
        let subscriber = Subscriber()
        let counts = Recorder<Int>()
        subscriber.subscribe(store) { _, state in counts.append(state.count) }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(counts.elements == [0, 1, 2])
        #expect(!Self.hasNoSubscribers(store))
        withExtendedLifetime(subscriber) {}
    }
}
