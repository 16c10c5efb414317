import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A container's synchronous token is its registration, and its table does not own it (`ObserverTable.Entry`): a
/// delivery may reach the entry of a token whose last reference went, and whose `deinit` has run. A store's
/// synchronous token is its registration too, once registered. These attack exactly those windows.
@Suite struct AttackTokenIsRegistrationTests {
    /// A round holds the first listener's call while the second listener's token is let go on another thread: the
    /// round then walks the entry of a token whose `deinit` has run, and must skip it.
    @Test func aTokenLetGoWhileARoundWalksTowardsItsEntryIsSkipped() async {
        let c = StateContainer(0, key: "attack.tokenIsRegistration.walk.\(UUID().uuidString)")
        let (first, entered, release) = attackListenerHeldAtOne(c)
        let heardAfterLetGo = AttackCounter()
        let letGo = AttackFlag()
        let second = AttackSlot<SubscriptionToken>()
        second.value = c.observe { _ in
            if letGo.isSet { _ = heardAfterLetGo.increment() }
        }
        let weakSecond = AttackWeak(second.value)
        let delivered = onAThreadOfItsOwn { c.modify(1) }
        #expect(await attackWait(for: entered))
        _ = letGo.set()
        second.value = nil
        #expect(weakSecond.object == nil, "the table kept the token alive")
        release.signal()
        #expect(await attackWait(for: delivered))
        #expect(heardAfterLetGo.value == 0, "a token's listener was called after its deinit")
        withExtendedLifetime(first) {}
    }

    /// The same window from inside the round: the first listener lets go of the second's last reference, on the
    /// delivering thread itself.
    @Test func aTokenLetGoByAnEarlierListenerOfTheSameRoundIsSkipped() {
        let c = StateContainer(0, key: "attack.tokenIsRegistration.inside.\(UUID().uuidString)")
        let second = AttackSlot<SubscriptionToken>()
        let heard = AttackCounter()
        let first = c.observe { value in
            if value == 1 { second.value = nil }
        }
        second.value = c.observe { _ in _ = heard.increment() }
        c.modify(1)
        c.modify(2)
        #expect(heard.value == 0)
        withExtendedLifetime(first) {}
    }

    /// A container and its tokens let go at once from two threads, many times: the container's `deinit` marks the
    /// tokens it finds, some of them inside their own `deinit` on the other thread. Nothing may crash, and a token
    /// kept past its container reports itself cancelled.
    @Test func containersAndTheirTokensLetGoAtOnce() async {
        for round in 0..<200 {
            let container = AttackSlot<StateContainer<Int>>()
            container.value = StateContainer(0, key: "attack.tokenIsRegistration.\(round).\(UUID().uuidString)")
            let tokens = Locked<[SubscriptionToken]>((0..<8).map { _ in container.value!.observe { _ in } })
            let kept = container.value!.observe { _ in }
            let go = DispatchSemaphore(value: 0)
            let tokensGone = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                tokens.withLock { $0.removeAll() }
            }
            let containerGone = onAThreadOfItsOwn {
                _ = go.wait(timeout: .now() + .seconds(attackPatience))
                container.value = nil
            }
            go.signal()
            go.signal()
            #expect(await attackWait(for: tokensGone))
            #expect(await attackWait(for: containerGone))
            #expect(kept.isCancelled, "round \(round)")
        }
    }

    /// A synchronous store subscription made while the store is busy is registered later, by the store's queued
    /// work, which holds it until then. Letting its token go before that must still stop it: the token is not the
    /// registration then (a version where it was kept calling such listeners, found by
    /// `threadsSubscribingCancellingAndDispatchingAtOnceKeepTheFirstValueRules`).
    @Test func aStoreTokenLetGoBeforeItsQueuedRegistrationRunsHearsNothing() async {
        struct Count: Equatable, Sendable {
            var value = 0
            var holds = 0
        }
        let reducer: @Sendable (inout Count, Bool) -> Void = { state, hold in
            if hold { state.holds += 1 } else { state.value += 1 }
        }
        let (store, blocker, entered, release) = attackStoreWithABlockingSubscriber(
            Count(), reducer: reducer, holds: \.holds
        )
        let busy = onAThreadOfItsOwn { store.dispatch(true) }
        #expect(await attackWait(for: entered))
        let heard = AttackCounter()
        var token: SubscriptionToken? = store.subscribe(\.value) { _ in _ = heard.increment() }
        let weakToken = AttackWeak(token)
        token = nil
        #expect(weakToken.object == nil)
        release.signal()
        #expect(await attackWait(for: busy))
        store.dispatch(false)
        store.dispatch(false)
        let settled = await eventually(timeout: .seconds(attackPatience)) { store.state.value == 2 }
        #expect(settled)
        #expect(heard.value == 0, "a let-go token's listener was called")
        withExtendedLifetime(blocker) {}
    }
}
