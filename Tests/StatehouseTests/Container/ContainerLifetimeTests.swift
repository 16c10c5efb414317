import Dispatch
import Testing
@testable import Statehouse

/// A container's tokens, listeners and its own closures never keep alive what they should not: the container, a
/// cancelled listener's closure, what a dead container's listeners captured.
@Suite("Container lifetime: nothing retains what it should not")
struct ContainerLifetimeTests {
    @Test func aLiveTokenDoesNotKeepTheContainerAlive() {
        weak var weakContainer: StateContainer<Int>?
        var token: SubscriptionToken?
        do {
            let container = StateContainer(0, key: "lifetime.token")
            weakContainer = container
            token = container.observe { _ in }
        }
        #expect(weakContainer == nil)
        token?.cancel()
    }

    @Test func cancellingReleasesTheClosure() {
        let container = StateContainer(0, key: "lifetime.closure")
        weak var weakWitness: Witness?
        let token: SubscriptionToken
        do {
            let witness = Witness()
            weakWitness = witness
            token = container.observe { _ in withExtendedLifetime(witness) {} }
        }
        #expect(weakWitness != nil)
        token.cancel()
        #expect(weakWitness == nil)
    }

    @Test func deallocatedContainerReleasesEveryKindOfListener() {
        weak var weakWitness: Witness?
        var tokens: [SubscriptionToken] = []
        do {
            let witness = Witness()
            weakWitness = witness
            let container = StateContainer(0, key: "lifetime.all")
            tokens.append(container.observe { _ in withExtendedLifetime(witness) {} })
            tokens.append(container.observe(on: .queue(.global())) { _ in withExtendedLifetime(witness) {} })
            container.bind(name: "named") { _ in withExtendedLifetime(witness) {} }
        }
        #expect(weakWitness == nil)
        withExtendedLifetime(tokens) {}
    }

    @Test func closureThatCapturesTheContainerWeaklyMakesNoCycle() {
        weak var weakContainer: StateContainer<Int>?
        do {
            let container = StateContainer(0, key: "lifetime.weakCapture")
            weakContainer = container
            container.bind(name: "self") { [weak container] _ in _ = container?.key }
            container.modify(1)
        }
        #expect(weakContainer == nil)
    }
}
