import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("observe takes its listener: copies, forwarding, captures", .serialized)
struct ObserveClosureTests {
    /// Source compatibility: one stored closure passed to several `observe` calls (each copies it).
    @Test func oneStoredClosurePassedToSeveralObserveCalls() async {
        let container = StateContainer(0, key: uniqueKey("observe.consuming.shared"))
        let heard = Recorder<Int>()
        let listener: @Sendable (Int) -> Void = { heard.append($0) }
        let first = container.observe(listener)
        let second = container.observe(initial: true, listener)
        let queued = DispatchQueue(label: "observe.queued")
        let third = container.observe(on: .queue(queued), listener)
        container.modify(1)
        queued.sync {}
        #expect(heard.elements == [0, 1, 1, 1])
        first.cancel()
        second.cancel()
        container.modify(2)
        queued.sync {}
        #expect(heard.elements == [0, 1, 1, 1, 2])
        third.cancel()
        container.modify(3)
        #expect(heard.elements == [0, 1, 1, 1, 2])
        // The closure is still the caller's.
        listener(7)
        #expect(heard.elements.last == 7)
    }

    /// A closure stored in a property, and one forwarded through a generic function's parameter.
    @Test func storedAndForwardedClosures() {
        final class Screen: Sendable {
            let render: @Sendable (Int) -> Void
            init(_ render: @escaping @Sendable (Int) -> Void) { self.render = render }
        }
        func subscribe<Value: Sendable>(
            _ container: StateContainer<Value>, _ listener: @escaping @Sendable (Value) -> Void
        ) -> [SubscriptionToken] {
            [container.observe(listener), container.observe(initial: true, listener)]
        }
        let container = StateContainer(0, key: uniqueKey("observe.consuming.forwarded"))
        let heard = Recorder<Int>()
        let screen = Screen { heard.append($0) }
        let tokens = subscribe(container, screen.render) + [container.observe(screen.render)]
        container.modify(1)
        #expect(heard.elements == [0, 1, 1, 1])
        for token in tokens { token.cancel() }
        container.modify(2)
        #expect(heard.elements == [0, 1, 1, 1])
        screen.render(5)
        #expect(heard.elements.last == 5)
    }

    /// The listener's captures live exactly while the subscription does, whatever the path (no copy leaked, none
    /// released twice): synchronous, `initial`, queued, and one closure registered twice.
    @Test(arguments: ["sync", "initial", "queued", "queuedInitial", "twice"])
    func theListenersCapturesLiveAsLongAsTheSubscription(path: String) {
        let container = StateContainer(0, key: uniqueKey("observe.consuming.captures.\(path)"))
        let queue = DispatchQueue(label: "observe.captures")
        let calls = SharedCounter()
        let (tokens, weakCaptured): ([SubscriptionToken], SharedWeak<Witness>) = {
            let captured = Witness()
            let listener: @Sendable (Int) -> Void = { _ in withExtendedLifetime(captured) {}; calls.increment() }
            let tokens: [SubscriptionToken]
            switch path {
            case "sync": tokens = [container.observe(listener)]
            case "initial": tokens = [container.observe(initial: true, listener)]
            case "queued": tokens = [container.observe(on: .queue(queue), listener)]
            case "queuedInitial": tokens = [container.observe(initial: true, on: .queue(queue), listener)]
            default: tokens = [container.observe(listener), container.observe(initial: true, listener)]
            }
            return (tokens, SharedWeak(captured))
        }()
        for value in 1...3 { container.modify(value) }
        queue.sync {}
        #expect(weakCaptured.object != nil)
        let expected = switch path {
        case "sync", "queued": 3
        case "initial", "queuedInitial": 4
        default: 7
        }
        #expect(calls.value == expected, "every change once, the initial value once")
        tokens.first?.cancel()
        if tokens.count > 1 {
            #expect(weakCaptured.object != nil, "the other registration still holds the closure")
        }
        for token in tokens { token.cancel() }
        queue.sync {}
        #expect(weakCaptured.object == nil)
    }
}
