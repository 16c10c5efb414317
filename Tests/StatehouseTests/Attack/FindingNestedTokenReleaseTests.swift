// Found while working on issue 16 (session 14): cancelling a listener let its closure go with the owner's lock held.
// A closure that held the last reference to another token of the same container or store then cancelled that token
// from inside the lock, which took the lock again: "Fatal error: Recursive call to lock Mutex". Each test here
// crashed the process before the fix.
import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite struct FindingNestedTokenReleaseTests {
    /// A listener whose closure is the only owner of another token of the same container (a view that keeps a
    /// child's subscription in its own listener).
    @Test func cancellingAListenerThatOwnsAnotherTokenOfItsContainer() {
        let container = StateContainer(0, key: "finding.nested.\(UUID().uuidString)")
        let innerCalls = Recorder<Int>()
        let outer: SubscriptionToken = {
            let inner = container.observe { innerCalls.append($0) }
            return container.observe { _ in withExtendedLifetime(inner) {} }
        }()
        container.modify(1)
        outer.cancel()
        container.modify(2)
        #expect(innerCalls.elements == [1], "the inner token went with the outer listener, and was cancelled")
    }

    @Test func releasingTheTokenOfAListenerThatOwnsAnotherToken() {
        let container = StateContainer(0, key: "finding.nested.\(UUID().uuidString)")
        var outer: SubscriptionToken? = {
            let inner = container.observe { _ in }
            return container.observe { _ in withExtendedLifetime(inner) {} }
        }()
        withExtendedLifetime(outer) {}
        outer = nil
        container.modify(1)
    }

    /// Binding a name again replaces its listener; the replaced closure owned another token of the container.
    @Test func rebindingANameWhoseListenerOwnsAnotherToken() {
        let container = StateContainer(0, key: "finding.nested.\(UUID().uuidString)")
        let inner = Locked<SubscriptionToken?>(container.observe { _ in })
        container.bind(name: "screen") { [token = inner.withLock { $0 }] _ in withExtendedLifetime(token) {} }
        inner.withLock { $0 = nil }
        let seen = Recorder<Int>()
        container.bind(name: "screen") { seen.append($0) }
        container.unbind(name: "screen")
        container.modify(1)
        #expect(seen.elements.isEmpty)
    }

    /// A value that holds the last reference to a token of its own container, replaced by `modify`: the replaced
    /// value was destroyed under the container's lock, and the token's cancellation took the lock again (found in
    /// session 17's review, fixed in session 18; it crashed the process before the fix).
    @Test func replacingAValueThatHoldsTheLastTokenOfItsContainer() {
        struct Screen: Sendable {
            var token: SubscriptionToken?
        }
        let container = StateContainer(Screen(), key: "finding.nested.value.\(UUID().uuidString)")
        let heard = Recorder<Int>()
        container.modify(Screen(token: container.observe { _ in heard.append(1) }))
        container.modify(Screen())
        container.modify(Screen())
        #expect(heard.elements == [1], "the token went with the replaced value, and was cancelled")
    }

    @Test func cancellingAStoreSubscriberThatOwnsAnotherTokenOfItsStore() {
        let store = makeCounterStore()
        let innerCounts = Recorder<Int>()
        let outer: SubscriptionToken = {
            let inner = store.subscribe(\.count) { innerCounts.append($0) }
            return store.subscribe(\.name) { _ in withExtendedLifetime(inner) {} }
        }()
        store.dispatch(.increment)
        outer.cancel()
        store.dispatch(.increment)
        #expect(innerCounts.elements == [0, 1])
    }

    /// A selection of its own: its group goes with the subscriber, and its `select` closure owned the other token.
    @Test func cancellingAStoreSelectionWhoseSelectorOwnsAnotherToken() {
        let store = makeCounterStore()
        let outer: SubscriptionToken = {
            let inner = store.subscribe(\.count) { _ in }
            return store.subscribe(
                select: { state in withExtendedLifetime(inner) { state.count } }, isDuplicate: ==
            ) { _ in }
        }()
        store.dispatch(.increment)
        outer.cancel()
        store.dispatch(.increment)
        #expect(store.state.count == 2)
    }
}
