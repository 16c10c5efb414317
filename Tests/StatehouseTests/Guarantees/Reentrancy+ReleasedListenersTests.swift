import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Runs `body` on a thread of its own and says whether it returned within `seconds` (a deadlock detector).
private func finishes(within seconds: Int = 30, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return await offThePool { done.wait(timeout: .now() + .seconds(seconds)) == .success }
}

/// A listener's closure, or a selection's, may own other tokens of the same container or store (a view keeping a
/// child's subscription in its listener), or the container itself: cancelling it, releasing its token, rebinding its
/// name or replacing a queued round lets the closure go outside every lock, so the tokens it owned cancel without
/// deadlock or crash, from any thread and from inside a delivery.
@Suite("Re-entrancy is allowed: listeners let go that own other tokens", .serialized)
struct ReentrancyReleasedListenersTests {
    /// Runs `body` off the pool while another thread delivers the change to 1 to a listener that waits until `body`
    /// returned: changes `body` makes are queued behind that delivery.
    private func whileDelivering(_ container: StateContainer<Int>, _ body: @escaping @Sendable () -> Void) async {
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let blocker = container.observe { value in
            if value == 1 {
                entered.signal()
                proceed.wait()
            }
        }
        let delivering = Task { await offThePool { container.modify(1) } }
        #expect(await waitOffThePool(for: entered))
        await offThePool {
            body()
            proceed.signal()
        }
        await delivering.value
        withExtendedLifetime(blocker) {}
    }

    /// A change queued while another thread delivers holds the table's entries. The listener is cancelled meanwhile
    /// (its entry leaves the table, released outside the lock, but the queued round still holds it); the next change
    /// replaces the queued round under the container's lock. The last reference to the listener's closure must not
    /// go there: the closure owns another token of the same container, whose cancellation takes that lock again.
    @Test func aCoalescedRoundLetsGoAListenerThatOwnsAnotherToken() async {
        let container = StateContainer(0, key: "link.coalesce.\(UUID().uuidString)")
        let innerCalls = Recorder<Int>()
        await whileDelivering(container) {
            // Registered while the round of 1 is delivered, which does not hold this listener.
            var outer: SubscriptionToken? = {
                let inner = container.observe { innerCalls.append($0) }
                return container.observe { _ in withExtendedLifetime(inner) {} }
            }()
            container.modify(2)  // queued: holds the outer entry
            outer?.cancel()  // the table lets the entry go; the queued round still holds it
            outer = nil
            container.modify(3)  // replaces the queued round under the lock
        }
        #expect(!innerCalls.elements.contains(3), "the inner token went with the outer listener, and was cancelled")
    }

    /// The same with a name bound again while a change is queued.
    @Test func aCoalescedRoundLetsGoAReboundListenerThatOwnsAnotherToken() async {
        let container = StateContainer(0, key: "link.coalesce.named.\(UUID().uuidString)")
        await whileDelivering(container) {
            do {
                let inner = container.observe { _ in }
                container.bind(name: "screen") { _ in withExtendedLifetime(inner) {} }
            }
            container.modify(2)
            container.bind(name: "screen") { _ in }
            container.modify(3)
        }
    }

    /// A listener whose closure is the only owner of another token of the same container (a view that keeps a
    /// child's subscription in its own listener).
    @Test func cancellingAListenerThatOwnsAnotherTokenOfItsContainer() {
        let container = StateContainer(0, key: "nestedToken.\(UUID().uuidString)")
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

    /// The same, the listener's token released instead of cancelled.
    @Test func releasingTheTokenOfAListenerThatOwnsAnotherToken() {
        let container = StateContainer(0, key: "nestedToken.\(UUID().uuidString)")
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
        let container = StateContainer(0, key: "nestedToken.\(UUID().uuidString)")
        let inner = Locked<SubscriptionToken?>(container.observe { _ in })
        container.bind(name: "screen") { [token = inner.withLock { $0 }] _ in withExtendedLifetime(token) {} }
        inner.withLock { $0 = nil }
        let seen = Recorder<Int>()
        container.bind(name: "screen") { seen.append($0) }
        container.unbind(name: "screen")
        container.modify(1)
        #expect(seen.elements.isEmpty)
    }

    /// A store subscriber whose closure is the only owner of another token of the store: cancelling it cancels that
    /// one too, outside the store's lock.
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

    /// A listener owns the next token, whose listener owns the next: cancelling the first ends all three.
    @Test func cancellingTheFirstOfAChainOfListenersEachOwningTheNext() {
        let container = StateContainer(0, key: uniqueKey("released.remover.chain"))
        let heard = Recorder<String>()
        let first: SubscriptionToken = {
            let third = container.observe { heard.append("c\($0)") }
            let second = container.observe { [third] value in
                heard.append("b\(value)")
                withExtendedLifetime(third) {}
            }
            return container.observe { [second] value in
                heard.append("a\(value)")
                withExtendedLifetime(second) {}
            }
        }()
        container.modify(1)
        first.cancel()
        container.modify(2)
        #expect(heard.elements.sorted() == ["a1", "b1", "c1"])
    }

    /// A listener lets go of another token of the container (its only reference), whose listener owns a third.
    @Test func aTokenReleasedInsideAListenerWhoseListenerOwnsAnotherToken() {
        let container = StateContainer(0, key: uniqueKey("released.remover.inside"))
        let heard = Recorder<String>()
        let slot = SharedSlot<SubscriptionToken>()
        slot.set({
            let inner = container.observe { heard.append("c\($0)") }
            return container.observe { [inner] value in
                heard.append("b\(value)")
                withExtendedLifetime(inner) {}
            }
        }())
        let releaser = container.observe { value in
            heard.append("a\(value)")
            if value == 1 { slot.letGo() }
        }
        container.modify(1)
        container.modify(2)
        #expect(heard.elements == ["c1", "b1", "a1", "a2"])
        releaser.cancel()
    }

    /// A listener lets go of its own token, and its closure owns another token of the same container.
    @Test func aTokenReleasedInsideItsOwnListenerThatOwnsAnotherToken() {
        let container = StateContainer(0, key: uniqueKey("released.remover.self"))
        let heard = Recorder<String>()
        let slot = SharedSlot<SubscriptionToken>()
        let inner = container.observe { heard.append("inner\($0)") }
        slot.set(container.observe { [inner] value in
            heard.append("outer\(value)")
            withExtendedLifetime(inner) {}
            if value == 1 { slot.letGo() }
        })
        _ = consume inner
        container.modify(1)
        container.modify(2)
        #expect(heard.elements == ["inner1", "outer1"])
    }

    /// The listener holds the last reference to its container: cancelling lets the container end inside `cancel()`.
    @Test func cancellingAListenerThatHoldsTheLastReferenceToItsContainer() {
        let (token, weakContainer): (SubscriptionToken, SharedWeak<StateContainer<Int>>) = {
            let container = StateContainer(0, key: uniqueKey("released.remover.container"))
            return (container.observe { [container] _ in _ = container.key }, SharedWeak(container))
        }()
        #expect(weakContainer.object != nil)
        token.cancel()
        #expect(weakContainer.object == nil)
        #expect(token.isCancelled)
    }

    /// A token let go on another thread while its entry is still ahead in a round held by the first listener: it
    /// hears nothing, and the token its closure owned hears nothing after the round.
    @Test func aTokenReleasedOnAnotherThreadWhileARoundHoldsItsEntry() async {
        let container = StateContainer(0, key: uniqueKey("released.remover.round"))
        let (blocker, entered, release) = listenerHeldAtOne(container)
        let heard = Recorder<Int>()
        let slot = SharedSlot<SubscriptionToken>()
        slot.set({
            let inner = container.observe { heard.append(100 + $0) }
            return container.observe { [inner] value in heard.append(value); withExtendedLifetime(inner) {} }
        }())
        let changed = onAThreadOfItsOwn { container.modify(1) }
        #expect(await waitOffThePool(for: entered))
        slot.letGo()
        release.signal()
        #expect(await waitOffThePool(for: changed))
        container.modify(2)
        // The inner token lives while the round holds the outer listener's closure: it may hear 1, never 2; the
        // outer one was let go before its call, and hears nothing.
        #expect(heard.elements.allSatisfy { $0 == 101 }, "heard: \(heard.elements)")
        blocker.cancel()
    }

    /// A listener that captures its own token (through a slot) cancels it in its first call, with `initial`.
    @Test(arguments: [false, true])
    func aListenerCancellingItsOwnTokenInItsFirstCall(initial: Bool) {
        let container = StateContainer(0, key: uniqueKey("released.consuming.self"))
        let heard = Recorder<Int>()
        let own = Locked<SubscriptionToken?>(nil)
        let cancelNow = SharedFlag()
        let token = container.observe(initial: initial) { value in
            heard.append(value)
            if let token = own.withLock({ $0 }) { token.cancel() } else { cancelNow.set() }
        }
        own.withLock { $0 = token }
        if cancelNow.isSet { token.cancel() }
        container.modify(1)
        container.modify(2)
        #expect(heard.elements == (initial ? [0] : [1]))
        own.withLock { $0 = nil }
    }

    /// A listener given to `observe(initial: true)` that owns another token of the container, cancelled from the
    /// initial call.
    @Test func anInitialCallThatLetsGoOfAnotherTokenItOwns() {
        let container = StateContainer(0, key: uniqueKey("released.consuming.initial.other"))
        let heard = Recorder<String>()
        let slot = SharedSlot<SubscriptionToken>()
        slot.set(container.observe { heard.append("other\($0)") })
        let token = container.observe(initial: true) { value in
            heard.append("mine\(value)")
            slot.letGo()
        }
        container.modify(1)
        #expect(heard.elements == ["mine0", "mine1"])
        token.cancel()
    }

    /// The `select`, `isDuplicate` and listener of a selection of its own each hold the last reference to another
    /// token of the store: cancelling it lets them go without deadlock.
    @Test func releasingAnOwnGroupsClosuresThatHoldTheLastTokenOfTheStoreDoesNotDeadlock() async {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let finished = await finishes {
            for round in 0..<200 {
                // The select, isDuplicate and listener of A each hold the last reference to another token of this
                // store: cancelling A lets them go, which cancels those, which takes the store's lock.
                func makeA() -> SubscriptionToken {
                    let inSelect = store.subscribe(select: { $0.count }, isDuplicate: ==) { _ in }
                    let inDuplicate = store.subscribe(\.count) { _ in }
                    let inListener = store.subscribe(select: { $0.child }, isDuplicate: ==) { (_: SGChild) in }
                    return store.subscribe(
                        select: { [inSelect] state in _ = inSelect; return state.count },
                        isDuplicate: { [inDuplicate] a, b in _ = inDuplicate; return a == b }
                    ) { [inListener] _ in _ = inListener }
                }
                let a = makeA()
                if round.isMultiple(of: 2) { store.dispatch(.increment) }
                a.cancel()
            }
        }
        #expect(finished, "cancelling a subscription whose closures hold the last token of the store deadlocked")
    }

    /// The same when that subscriber is the store's last, so that its removal drops every group.
    @Test func releasingAnOwnGroupsClosuresWhenTheLastSubscriberGoesDoesNotDeadlock() async {
        // The same with more than 64 groups, so that removing the last subscriber drops every group.
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let finished = await finishes {
            for _ in 0..<20 {
                var tokens = (0..<70).map { row in store.subscribe(\.rows[row]) { _ in } }
                func makeLast() -> SubscriptionToken {
                    let inner = store.subscribe(select: { $0.count }, isDuplicate: ==) { _ in }
                    return store.subscribe(select: { [inner] state in _ = inner; return state.child.value },
                                           isDuplicate: ==) { _ in }
                }
                let last = makeLast()
                for token in tokens { token.cancel() }
                tokens = []
                store.dispatch(.increment)
                last.cancel()
            }
        }
        #expect(finished)
    }
}
