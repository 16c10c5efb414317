// Review of 6f1fd5a (entries let go outside every lock; ContainerLink), cd54493 (StoreSubscription without a weak
// store) and ca6a33c (RecentKeyPaths), by a helper in session 14. Two crash findings, each fixed in the commit that
// added these tests; before it, each killed the test process with "Recursive call to lock Mutex":
// - AttackLinkWindowTests and AttackLinkHammerTests.containerEndsWhileOtherThreadsCancelItsTokens: `detach` took a
//   strong reference to the container out of the link; when that became the last one, `deinit` ran inside the
//   link's lock, and took it again. (Session 17 moved the container's state and lock into the link: `detach` no
//   longer touches the container, and the window tests now drive a cancellation and a `deinit` to that one lock.)
// - AttackLinkReentrancyTests: a queued delivery round replaced by a newer change (`WorkQueue.submit`, under the
//   container's lock) let go the last reference to a cancelled listener's closure, which owned another token.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A barrier for `count` threads, spinning (the threads are of their own, never the cooperative pool's).
private final class SpinBarrier: Sendable {
    private let arrived = Atomic<Int>(0)
    private let count: Int
    init(_ count: Int) { self.count = count }
    func arriveAndWait(generation: Int) {
        arrived.add(1, ordering: .acquiringAndReleasing)
        attackSpin(timeout: .seconds(60)) { arrived.load(ordering: .acquiring) >= count * generation }
    }
}

@Suite struct AttackLinkReentrancyTests {
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
        #expect(await attackWait(for: entered))
        await offThePool {
            body()
            proceed.signal()
        }
        await delivering.value
        withExtendedLifetime(blocker) {}
    }

    /// A change queued while another thread delivers holds the table's entries. The listener is cancelled meanwhile
    /// (its entry leaves the table, released outside the lock, but the queued round still holds it); the next change
    /// replaces the queued round under the container's lock, which let the last reference to the listener's closure
    /// go there: the closure owns another token of the same container, whose cancellation takes that lock again.
    @Test func aCoalescedRoundLetsGoAListenerThatOwnsAnotherToken() async {
        let container = StateContainer(0, key: "attack.link.coalesce.\(UUID().uuidString)")
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
        let container = StateContainer(0, key: "attack.link.coalesce.named.\(UUID().uuidString)")
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
}

@Suite(.serialized) struct AttackLinkHammerTests {
    /// A container released on one thread while others cancel or release its tokens, at the same instant: the window
    /// between its count reaching zero and its deinit clearing the link, while `detach` holds the link.
    @Test func containerEndsWhileOtherThreadsCancelItsTokens() async {
        let threads = 4
        let iterations = 3_000
        struct Round: Sendable {
            var container: StateContainer<Int>?
            var tokens: [SubscriptionToken?]
        }
        let rounds = Locked<[Round]>([])
        let weakContainers = Locked<[AttackWeak<StateContainer<Int>>]>([])
        let weakLinks = Locked<[AttackWeak<ContainerLink<Int>>]>([])
        let calls = Atomic<Int>(0)
        for i in 0..<iterations {
            let container = StateContainer(0, key: "attack.link.hammer.\(i).\(UUID().uuidString)")
            var tokens: [SubscriptionToken?] = []
            for _ in 0..<(threads - 1) * 2 {
                tokens.append(container.observe { _ in calls.add(1, ordering: .relaxed) })
            }
            weakContainers.withLock { $0.append(AttackWeak(container)) }
            weakLinks.withLock { $0.append(AttackWeak(container.link)) }
            rounds.withLock { $0.append(Round(container: container, tokens: tokens)) }
        }
        let barrier = SpinBarrier(threads)
        await onNewThreads(threads) { thread in
            for i in 0..<iterations {
                barrier.arriveAndWait(generation: i + 1)
                if thread == 0 {
                    let container = rounds.withLock { rounds in
                        defer { rounds[i].container = nil }
                        return rounds[i].container
                    }
                    container?.modify(i)
                    // The last reference goes here, while the others cancel.
                } else {
                    let mine = rounds.withLock { rounds in
                        let picked = [rounds[i].tokens[(thread - 1) * 2], rounds[i].tokens[(thread - 1) * 2 + 1]]
                        rounds[i].tokens[(thread - 1) * 2] = nil
                        rounds[i].tokens[(thread - 1) * 2 + 1] = nil
                        return picked
                    }
                    mine[0]?.cancel()
                    _ = mine  // the second is released here, at the end of the iteration
                }
            }
        }
        #expect(weakContainers.withLock { $0.allSatisfy { $0.object == nil } }, "a container outlived its tokens")
        #expect(weakLinks.withLock { $0.allSatisfy { $0.object == nil } }, "a link outlived its container and tokens")
    }

    /// Listeners of a container cancel tokens of that container and of another from inside their calls, while
    /// other threads change both, cancel the same tokens, and let the last references to the containers go. A token
    /// whose cancel() returned is never called after (checked by the listener itself).
    @Test func listenersCancelTokensWhileContainersEnd() async {
        let iterations = 400
        let threads = 4
        let lateCalls = Atomic<Int>(0)
        let weakContainers = Locked<[AttackWeak<StateContainer<Int>>]>([])
        for i in 0..<iterations {
            let a = StateContainer(0, key: "attack.link.pair.a.\(i).\(UUID().uuidString)")
            let b = StateContainer(0, key: "attack.link.pair.b.\(i).\(UUID().uuidString)")
            weakContainers.withLock { $0.append(contentsOf: [AttackWeak(a), AttackWeak(b)]) }
            let held = Locked<[(SubscriptionToken, DoneFlag)]>([])
            @Sendable func cancelAll() {
                let all = held.withLock { held in defer { held = [] }; return held }
                for (token, done) in all {
                    token.cancel()
                    done.done.store(true, ordering: .releasing)
                }
            }
            for container in [a, b, a, b] {
                let flag = DoneFlag()
                let token = container.observe { _ in
                    if flag.done.load(ordering: .acquiring) { lateCalls.add(1, ordering: .relaxed) }
                    let all = held.withLock { held in defer { held = [] }; return held }
                    for (token, other) in all { token.cancel(); other.done.store(true, ordering: .releasing) }
                }
                held.withLock { $0.append((token, flag)) }
            }
            let pair = Locked<(StateContainer<Int>?, StateContainer<Int>?)>((a, b))
            await onNewThreads(threads) { thread in
                switch thread {
                case 0:
                    let a = pair.withLock { $0.0 }
                    a?.modify(1)
                    pair.withLock { $0.0 = nil }
                case 1:
                    let b = pair.withLock { $0.1 }
                    b?.update { $0 += 1 }
                    pair.withLock { $0.1 = nil }
                case 2:
                    cancelAll()
                default:
                    if let a = pair.withLock({ $0.0 }) { a.modify(2) }
                    if let b = pair.withLock({ $0.1 }) { b.modify(2) }
                }
            }
        }
        #expect(lateCalls.load(ordering: .relaxed) == 0)
        #expect(await eventually { weakContainers.withLock { $0.allSatisfy { $0.object == nil } } })
    }
}

private final class DoneFlag: Sendable {
    let done = Atomic<Bool>(false)
}

@Suite struct AttackLinkMemoryTests {
    @Test func aContainerTokenDoesNotKeepItsContainerAliveAndTheLinkGoesWithTheTokens() {
        var container: StateContainer<Int>? = StateContainer(0, key: "attack.link.weak.\(UUID().uuidString)")
        let weakContainer = AttackWeak(container)
        let weakLink = AttackWeak(container!.link)
        let calls = Recorder<Int>()
        var tokens: [SubscriptionToken] = (0..<3).map { _ in container!.observe { calls.append($0) } }
        container!.bind(name: "n") { _ in }
        container!.modify(1)
        container = nil
        #expect(weakContainer.object == nil, "a token kept its container alive")
        #expect(weakLink.object != nil)
        tokens[0].cancel()
        tokens.removeAll()
        #expect(weakLink.object == nil, "the link outlived the container and every token")
        #expect(calls.elements == [1, 1, 1])
    }

    @Test func aStoreDiesOnceItsTokensAreCancelledEvenWithAQueuedRegistration() async {
        var store: Store<Counter, CounterAction>? = makeCounterStore()
        let weakStore = AttackWeak(store)
        let tokens = Locked<[SubscriptionToken]>([])
        // A registration queued from inside a subscriber (the store is busy): it holds the store until it runs.
        let outer = store!.subscribe(\.count) { [weak store] count in
            guard count == 1, let store else { return }
            let token = store.subscribe(\.name) { _ in }
            tokens.withLock { $0.append(token) }
            token.cancel()
        }
        store!.dispatch(.increment)
        outer.cancel()
        #expect(tokens.withLock { $0.count } == 1)
        tokens.withLock { $0.removeAll() }
        store = nil
        #expect(await eventually { weakStore.object == nil }, "the store outlived its cancelled tokens")
    }

    @Test func storesDieAfterSubscribersRaceDispatches() async {
        let iterations = 200
        let weakStores = Locked<[AttackWeak<Store<Counter, CounterAction>>]>([])
        for _ in 0..<iterations {
            let store = makeCounterStore()
            weakStores.withLock { $0.append(AttackWeak(store)) }
            let box = Locked<Store<Counter, CounterAction>?>(store)
            await onNewThreads(3) { thread in
                guard let store = box.withLock({ $0 }) else { return }
                switch thread {
                case 0:
                    for _ in 0..<20 { store.dispatch(.increment) }
                default:
                    for _ in 0..<10 {
                        let token = store.subscribe(\.count) { _ in }
                        let other = store.subscribe(select: { $0.count }, isDuplicate: ==) { _ in }
                        token.cancel()
                        _ = other
                    }
                }
            }
            box.withLock { $0 = nil }
        }
        #expect(await eventually { weakStores.withLock { $0.allSatisfy { $0.object == nil } } })
    }
}

@Suite struct AttackRecentKeyPathsTests {
    struct Rows: Equatable, Sendable {
        var values: [Int] = Array(0..<64)
        var a = 1000
        var b = 2000
    }

    enum RowAction: Sendable {
        case set(Int, Int)
    }

    func makeStore() -> Store<Rows, RowAction> {
        Store(initialState: Rows()) { state, action in
            switch action {
            case .set(let index, let value): state.values[index] = value
            }
            return .none
        }
    }

    /// Key paths with subscript arguments made anew each time, literals, many distinct ones; groups dropped and their
    /// numbers given to others between lookups: every subscriber gets its own key path's value.
    @Test func keyPathGroupsNeverLeadToAnotherKeyPath() {
        let store = makeStore()
        var rng = SplitMix64(seed: 7)
        var expected = Rows()
        var history: [Set<Int>] = (0..<64).map { [$0] }
        var live: [(index: Int, token: SubscriptionToken, seen: Recorder<Int>)] = []
        for step in 0..<4_000 {
            let roll = rng.next(below: 100)
            if roll < 45 {
                let index = rng.next(below: 64)
                let seen = Recorder<Int>()
                let keyPath: any KeyPath<Rows, Int> & Sendable = \Rows.values[index]
                let token = store.subscribe(keyPath) { seen.append($0) }
                #expect(seen.elements == [expected.values[index]], "step \(step): subscribed to values[\(index)]")
                live.append((index, token, seen))
            } else if roll < 80, !live.isEmpty {
                let victim = live.remove(at: rng.next(below: live.count))
                victim.token.cancel()
            } else if roll < 85 {
                // drop everything: the next subscribers get the groups' numbers anew
                for entry in live { entry.token.cancel() }
                live.removeAll()
            } else {
                let index = rng.next(below: 64)
                let value = rng.next(below: 1_000_000) + 100
                expected.values[index] = value
                history[index].insert(value)
                store.dispatch(.set(index, value))
            }
            // Literals without arguments, each one object for the program's life, looked up between the others.
            if step % 7 == 0 {
                let seenA = Recorder<Int>()
                let seenB = Recorder<Int>()
                let ta = store.subscribe(\.a) { seenA.append($0) }
                let tb = store.subscribe(\.b) { seenB.append($0) }
                #expect(seenA.elements == [1000] && seenB.elements == [2000], "step \(step)")
                ta.cancel()
                tb.cancel()
            }
        }
        for entry in live {
            #expect(entry.seen.elements.last == expected.values[entry.index])
            #expect(Set(entry.seen.elements).isSubset(of: history[entry.index]), "values[\(entry.index)]")
        }
        for entry in live { entry.token.cancel() }
    }
}

@Suite struct AttackLinkWindowTests {
    /// Cancels `token` and lets go of `container` on two threads of their own while a third holds the container's
    /// lock through its link, with no reference to the container; then `beforeUnlocking` runs and the lock is let
    /// go. The cancellation and the container's `deinit` meet at that one lock, in either order. (Until the link
    /// held the state, `detach` took a reference to the container, which could be its last: the `deinit` then ran
    /// inside the link's lock, on the cancelling thread.)
    /// - Returns: Signalled once each, when the cancellation returned and when the `deinit` did (they may not: the
    ///   caller waits with a deadline).
    private func cancelWhileTheContainerEnds(
        _ container: inout StateContainer<Int>?,
        cancelling token: SubscriptionToken,
        beforeUnlocking: @escaping @Sendable () -> Void = {}
    ) async -> (cancelled: DispatchSemaphore, ended: DispatchSemaphore) {
        let link = container!.link
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            link.locked { _ in
                entered.signal()
                proceed.wait()
            }
        }
        #expect(await attackWait(for: entered))
        let cancelled = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let last = Locked<StateContainer<Int>?>(container.take())
        Thread.detachNewThread {
            token.cancel()
            cancelled.signal()
        }
        Thread.detachNewThread {
            last.withLock { $0 = nil }  // the container's last reference: its deinit runs here
            ended.signal()
        }
        beforeUnlocking()
        proceed.signal()
        return (cancelled, ended)
    }

    @Test func aSubscriptionLeavesWhileItsContainerEnds() async {
        for round in 0..<50 {
            var container: StateContainer<Int>? = StateContainer(0, key: "attack.link.window.\(round).\(UUID())")
            let calls = Atomic<Int>(0)
            var token: SubscriptionToken? = container!.observe { _ in calls.add(1, ordering: .relaxed) }
            let weakContainer = AttackWeak(container)
            let weakLink = AttackWeak(container!.link)
            let (cancelled, ended) = await cancelWhileTheContainerEnds(&container, cancelling: token!)
            #expect(await attackWait(for: cancelled, seconds: 15), "round \(round): the cancellation never returned")
            #expect(await attackWait(for: ended, seconds: 15), "round \(round): the deinit never returned")
            #expect(weakContainer.object == nil)
            #expect(token!.isCancelled)
            #expect(calls.load(ordering: .relaxed) == 0)
            // Once the token goes, nothing holds the link (and the state it held went with the container).
            token = nil
            #expect(weakLink.object == nil)
        }
    }

    /// Found by a third review: the container's `deinit` cancels its subscriptions, waiting for a queued listener's
    /// call in progress; that listener cancels another token of the same container, which takes the container's
    /// lock. The `deinit` must not hold that lock while it waits (2 of 2 runs hung before the fix).
    @Test func theDeinitWaitsForAListenerThatCancelsAnotherToken() async {
        var container: StateContainer<Int>? = StateContainer(0, key: "attack.link.window.q.\(UUID().uuidString)")
        let tokenT = container!.observe { _ in }
        let tokenU = Locked<SubscriptionToken?>(container!.observe { _ in })
        let inListener = DispatchSemaphore(value: 0)
        let listenerGo = DispatchSemaphore(value: 0)
        let listenerDone = DispatchSemaphore(value: 0)
        let tokenS = container!.observe(on: .queue(DispatchQueue(label: "attack.link.window.q"))) { value in
            guard value == 1 else { return }
            inListener.signal()
            listenerGo.wait()
            tokenU.withLock { $0 }?.cancel()
            listenerDone.signal()
        }
        container!.modify(1)
        #expect(await attackWait(for: inListener))
        let (cancelled, ended) = await cancelWhileTheContainerEnds(&container, cancelling: tokenT) {
            listenerGo.signal()
        }
        #expect(await attackWait(for: cancelled, seconds: 15), "the cancellation never returned")
        #expect(await attackWait(for: ended, seconds: 15), "the container's deinit never returned")
        let listenerFinished = await attackWait(for: listenerDone, seconds: 15)
        #expect(listenerFinished, "the listener's cancel of another token never returned")
        withExtendedLifetime(tokenS) {}
    }
}
