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
        spinWait(timeout: .seconds(60)) { arrived.load(ordering: .acquiring) >= count * generation }
    }
}

/// Set once a token's `cancel()` returned: its listener, called after, counts a late call.
private final class DoneFlag: Sendable {
    let done = Atomic<Bool>(false)
}

/// A container's state and lock live in its link, which its tokens hold without holding the container: a container
/// ends while its tokens are cancelled or let go on other threads, while its link is locked, while its listeners
/// cancel other tokens; nothing deadlocks or crashes, a token outliving its container reports itself cancelled, and
/// the link goes with the last token.
@Suite("A container ending while its tokens leave", .serialized)
struct ContainerEndingTests {
    /// Cancels `token` and lets go of `container` on two threads of their own while a third holds the container's
    /// lock through its link, with no reference to the container; then `beforeUnlocking` runs and the lock is let
    /// go. The cancellation and the container's `deinit` meet at that one lock, in either order. (`detach` must not
    /// take a reference to the container: it could be its last, and the `deinit` would run inside the link's lock.)
    ///
    /// Each thread lets go of what it holds (the link, the token, the container) before it signals: a thread's
    /// closure is released only when the thread ends, later than any signal, and a caller checking that the link
    /// went must not race it.
    /// - Returns: Signalled once each, when the cancellation returned, when the `deinit` did, and when the thread
    ///   that held the lock let go of the link (they may not: the caller waits with a deadline).
    private func cancelWhileTheContainerEnds(
        _ container: inout StateContainer<Int>?,
        cancelling token: SubscriptionToken,
        beforeUnlocking: @escaping @Sendable () -> Void = {}
    ) async -> (cancelled: DispatchSemaphore, ended: DispatchSemaphore, unlocked: DispatchSemaphore) {
        let heldLink = Locked<ContainerLink<Int>?>(container!.link)
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        let unlocked = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            do {
                let link = heldLink.withLock { $0.take() }
                link?.locked { _ in
                    entered.signal()
                    proceed.wait()
                }
            }
            unlocked.signal()
        }
        #expect(await waitOffThePool(for: entered))
        let cancelled = DispatchSemaphore(value: 0)
        let ended = DispatchSemaphore(value: 0)
        let last = Locked<StateContainer<Int>?>(container.take())
        let cancelling = Locked<SubscriptionToken?>(token)
        Thread.detachNewThread {
            cancelling.withLock { $0.take() }?.cancel()
            cancelled.signal()
        }
        Thread.detachNewThread {
            last.withLock { $0 = nil }  // the container's last reference: its deinit runs here
            ended.signal()
        }
        beforeUnlocking()
        proceed.signal()
        return (cancelled, ended, unlocked)
    }

    /// A container's tokens do not keep it alive; its link lives until the last token goes.
    @Test func aContainerTokenDoesNotKeepItsContainerAliveAndTheLinkGoesWithTheTokens() {
        var container: StateContainer<Int>? = StateContainer(0, key: "link.weak.\(UUID().uuidString)")
        let weakContainer = SharedWeak(container)
        let weakLink = SharedWeak(container!.link)
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
        let weakContainers = Locked<[SharedWeak<StateContainer<Int>>]>([])
        let weakLinks = Locked<[SharedWeak<ContainerLink<Int>>]>([])
        let calls = Atomic<Int>(0)
        for i in 0..<iterations {
            let container = StateContainer(0, key: "link.hammer.\(i).\(UUID().uuidString)")
            var tokens: [SubscriptionToken?] = []
            for _ in 0..<(threads - 1) * 2 {
                tokens.append(container.observe { _ in calls.add(1, ordering: .relaxed) })
            }
            weakContainers.withLock { $0.append(SharedWeak(container)) }
            weakLinks.withLock { $0.append(SharedWeak(container.link)) }
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
        let weakContainers = Locked<[SharedWeak<StateContainer<Int>>]>([])
        for i in 0..<iterations {
            let a = StateContainer(0, key: "link.pair.a.\(i).\(UUID().uuidString)")
            let b = StateContainer(0, key: "link.pair.b.\(i).\(UUID().uuidString)")
            weakContainers.withLock { $0.append(contentsOf: [SharedWeak(a), SharedWeak(b)]) }
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

    /// A subscription cancelled while its container ends, both held at the link's lock: both return, the token is
    /// cancelled and was never called, and the link goes with the token.
    @Test func aSubscriptionLeavesWhileItsContainerEnds() async {
        for round in 0..<50 {
            var container: StateContainer<Int>? = StateContainer(0, key: "link.window.\(round).\(UUID())")
            let calls = Atomic<Int>(0)
            var token: SubscriptionToken? = container!.observe { _ in calls.add(1, ordering: .relaxed) }
            let weakContainer = SharedWeak(container)
            let weakLink = SharedWeak(container!.link)
            let (cancelled, ended, unlocked) = await cancelWhileTheContainerEnds(&container, cancelling: token!)
            #expect(await waitOffThePool(for: cancelled), "round \(round): the cancellation never returned")
            #expect(await waitOffThePool(for: ended), "round \(round): the deinit never returned")
            #expect(weakContainer.object == nil)
            #expect(token!.isCancelled)
            #expect(calls.load(ordering: .relaxed) == 0)
            // Once the token goes, nothing holds the link (and the state it held went with the container). The
            // thread that held the link's lock must have let go of the link first: it holds it until then.
            _ = await waitOffThePool(for: unlocked)
            token = nil
            #expect(weakLink.object == nil)
        }
    }

    /// The container's `deinit` cancels its subscriptions, waiting for a queued listener's call in progress; that
    /// listener cancels another token of the same container, which takes the container's lock. The `deinit` does not
    /// hold that lock while it waits: everything returns.
    @Test func theDeinitWaitsForAListenerThatCancelsAnotherToken() async {
        var container: StateContainer<Int>? = StateContainer(0, key: "link.window.q.\(UUID().uuidString)")
        let tokenT = container!.observe { _ in }
        let tokenU = Locked<SubscriptionToken?>(container!.observe { _ in })
        let inListener = DispatchSemaphore(value: 0)
        let listenerGo = DispatchSemaphore(value: 0)
        let listenerDone = DispatchSemaphore(value: 0)
        let tokenS = container!.observe(on: .queue(DispatchQueue(label: "link.window.q"))) { value in
            guard value == 1 else { return }
            inListener.signal()
            listenerGo.wait()
            tokenU.withLock { $0 }?.cancel()
            listenerDone.signal()
        }
        container!.modify(1)
        #expect(await waitOffThePool(for: inListener))
        let (cancelled, ended, _) = await cancelWhileTheContainerEnds(&container, cancelling: tokenT) {
            listenerGo.signal()
        }
        #expect(await waitOffThePool(for: cancelled, seconds: 15), "the cancellation never returned")
        #expect(await waitOffThePool(for: ended, seconds: 15), "the container's deinit never returned")
        let listenerFinished = await waitOffThePool(for: listenerDone, seconds: 15)
        #expect(listenerFinished, "the listener's cancel of another token never returned")
        withExtendedLifetime(tokenS) {}
    }

    /// A container deallocated on one thread while its subscription leaves on another (cancelled directly, or from
    /// inside another container's update body): no deadlock.
    @Test func aContainerEndingWhileItsSubscriptionLeaves() async {
        let finished = await arFinishes(seconds: 120) {
            for i in 0..<400 {
                let container = ARBox<StateContainer<Int>?>(StateContainer(0, key: "containerEnding.b4.\(i)"))
                let token = container.value!.observe { _ in }
                let other = StateContainer(0, key: "containerEnding.b4o.\(i)")
                let go = Atomic(0)
                let group = DispatchGroup()
                group.enter()
                Thread.detachNewThread {
                    go.add(1, ordering: .sequentiallyConsistent)
                    while go.load(ordering: .sequentiallyConsistent) < 2 {}
                    if i % 2 == 0 { token.cancel() } else { other.update { _ in token.cancel() } }
                    group.leave()
                }
                go.add(1, ordering: .sequentiallyConsistent)
                while go.load(ordering: .sequentiallyConsistent) < 2 {}
                container.value = nil
                group.wait()
            }
        }
        #expect(finished)
    }

    /// A container and its tokens let go at once from two threads, many times: the container's `deinit` marks the
    /// tokens it finds, some of them inside their own `deinit` on the other thread. Nothing may crash, and a token
    /// kept past its container reports itself cancelled.
    @Test func containersAndTheirTokensLetGoAtOnce() async {
        for round in 0..<200 {
            let container = SharedSlot<StateContainer<Int>>()
            container.value = StateContainer(0, key: "tokenIsRegistration.\(round).\(UUID().uuidString)")
            let tokens = Locked<[SubscriptionToken]>((0..<8).map { _ in container.value!.observe { _ in } })
            let kept = container.value!.observe { _ in }
            let go = DispatchSemaphore(value: 0)
            let tokensGone = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                tokens.withLock { $0.removeAll() }
            }
            let containerGone = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                container.value = nil
            }
            go.signal()
            go.signal()
            #expect(await waitOffThePool(for: tokensGone))
            #expect(await waitOffThePool(for: containerGone))
            #expect(kept.isCancelled, "round \(round)")
        }
    }

    /// Containers and tokens of every kind let go at once from two threads: synchronous tokens with and without weak
    /// references, queued ones, named listeners, streams. Kept tokens report cancelled, streams finish.
    @Test func containersAndTokensOfEveryKindLetGoAtOnce() async {
        let queue = DispatchQueue(label: "merge.everyKind")
        for round in 0..<150 {
            let container = SharedSlot<StateContainer<Int>>()
            let c = StateContainer(0, key: "merge.everyKind.\(round).\(UUID().uuidString)")
            container.value = c
            let slots = (0..<8).map { _ in SharedSlot<SubscriptionToken>() }
            var weakRefs: [SharedWeak<SubscriptionToken>] = []
            for (index, slot) in slots.enumerated() {
                if index.isMultiple(of: 3) {
                    slot.set(c.observe(on: .queue(queue)) { _ in })
                } else {
                    slot.set(c.observe { _ in })
                }
                if index.isMultiple(of: 2) { weakRefs.append(SharedWeak(slot.value)) }
            }
            c.bind(name: "n") { _ in }
            let kept = c.observe { _ in }
            let keptQueued = c.observe(on: .queue(queue)) { _ in }
            let keptWeak = SharedWeak(kept)
            let stream = c.values
            let finished = DispatchSemaphore(value: 0)
            Task.detached {
                for await _ in stream {}
                finished.signal()
            }
            let go = DispatchSemaphore(value: 0)
            let tokensGone = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                for slot in slots { slot.letGo() }
            }
            let containerGone = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(signalPatience))
                container.value = nil
            }
            _ = consume c
            go.signal()
            go.signal()
            #expect(await waitOffThePool(for: tokensGone))
            #expect(await waitOffThePool(for: containerGone))
            #expect(kept.isCancelled && keptQueued.isCancelled, "round \(round)")
            #expect(keptWeak.object != nil)
            #expect(await waitOffThePool(for: finished), "round \(round): the stream did not finish")
        }
    }
}
