import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// An app's state with a counter part, which a scoped store shows.
private struct ShellState: Equatable, Sendable {
    var counter = Counter()
    var title = ""
}

private enum ShellAction: Equatable, Sendable {
    case counter(CounterAction)
    case retitle(String)
}

private func makeShellStore() -> Store<ShellState, ShellAction> {
    Store(initialState: ShellState()) { (state: inout ShellState, action: ShellAction) -> Void in
        switch action {
        case .counter(let action): counterReducer(&state.counter, action)
        case .retitle(let title): state.title = title
        }
    }
}

@Suite("Listeners see the new value: a subscriber reads its scoped stores at that value or later", .serialized)
struct ListenersSeeTheNewValueTests {
    /// A parent's subscriber that reads its scoped store during the parent's delivery reads the state it was called
    /// with, never the state before it.
    @Test func aParentsSubscriberReadsTheScopedStoreAtTheStateItWasCalledWith() {
        let app = makeShellStore()
        let childSlot = SharedSlot<Store<Counter, CounterAction>>()
        let stale = SharedCounter()
        let checked = SharedCounter()
        let check: @Sendable (ShellState) -> Void = { state in
            guard let child = childSlot.value else { return }
            checked.increment()
            if child.state != state.counter { stale.increment() }
        }
        // Subscribers made before the scoped store and after it, selecting the whole state and a part of it.
        let before = app.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, check)
        let child = app.scope(state: \.counter, action: ShellAction.counter)
        childSlot.value = child
        let after = app.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, check)
        let byKeyPath = app.subscribe(\.counter.count) { count in
            if childSlot.value?.state.count != count { stale.increment() }
        }
        for value in 1...100 {
            app.dispatch(.counter(.set(value)))
            child.dispatch(.increment)
            app.dispatch(.retitle("title \(value)"))
        }
        #expect(checked.value > 0)
        #expect(stale.value == 0, "\(stale.value) calls saw the scoped store behind its parent")
        withExtendedLifetime([before, after, byKeyPath]) {}
    }

    /// The same with several threads dispatching to the parent and to the scoped store.
    @Test func aParentsSubscriberReadsTheScopedStoreAtItsStateWhileThreadsDispatch() async {
        let app = makeShellStore()
        let childSlot = SharedSlot<Store<Counter, CounterAction>>()
        let stale = SharedCounter()
        let checked = SharedCounter()
        let check: @Sendable (ShellState) -> Void = { state in
            guard let child = childSlot.value else { return }
            checked.increment()
            if child.state != state.counter { stale.increment() }
        }
        let before = app.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, check)
        let child = app.scope(state: \.counter, action: ShellAction.counter)
        childSlot.value = child
        let after = app.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, check)
        await onNewThreads(3) { thread in
            for value in 0..<2_000 {
                switch thread {
                case 0: app.dispatch(.counter(.increment))
                case 1: child.dispatch(.increment)
                default: app.dispatch(.retitle("title \(value)"))
                }
            }
        }
        #expect(await eventually { app.state.counter.count == 4_000 })
        #expect(checked.value > 0)
        #expect(stale.value == 0, "\(stale.value) calls saw the scoped store behind its parent")
        withExtendedLifetime([before, after]) {}
    }

    /// A scoped store's subscriber reads its sibling scope at the parent's new state: every scope follows the
    /// parent's change before any scope's subscriber is told of it.
    @Test func aScopedStoresSubscriberSeesItsSiblingsAtTheParentsState() {
        let parent = makePairStore()
        let scopeA = parent.scope(state: \.a, action: { (action: SiblingPairAction) in action })
        let scopeB = parent.scope(state: \.b, action: { (action: SiblingPairAction) in action })
        let calls = SharedCounter()
        let stale = SharedCounter()
        let token = scopeA.subscribe(\.self, initial: false) { a in
            calls.increment()
            // The parent has the new state; its other view must not be older.
            if scopeB.state != parent.state.b || scopeB.state != a { stale.increment() }
        }
        for value in 1...100 { parent.dispatch(.setBoth(value)) }
        #expect(calls.value == 100)
        #expect(stale.value == 0, "\(stale.value) of \(calls.value) calls saw a sibling scope behind the parent")
        token.cancel()
    }

    /// Two threads dispatch, one subscribes and cancels on every scope in a loop (each scope starts and stops
    /// following), two read every scope's `state` in a loop: no reader sees a scope's counter go down, and a
    /// subscriber called with `v` reads the scope's `state` at `v` or later.
    /// Every kind of scope: plain, a scope of a scope, an `ifLet` scope, and a scope of an `ifLet` scope.
    @Test(arguments: 0..<5)
    func noScopedStoreStateGoesBackwardsWhileOthersDispatchSubscribeAndCancel(round: Int) async {
        let scopes = ReadThroughScopes()
        let failure = FirstFailure()
        let dispatchersLeft = Atomic<Int>(2)
        let ticksPerDispatcher = isUnderThreadSanitizer ? 1_000 : 3_000
        await onNewThreads(5) { thread in
            switch thread {
            case 0, 1:
                for _ in 0..<ticksPerDispatcher { scopes.root.dispatch(.tick) }
                dispatchersLeft.subtract(1, ordering: .sequentiallyConsistent)
            case 2:
                while dispatchersLeft.load(ordering: .sequentiallyConsistent) > 0 {
                    let tokens = scopes.subscribeAll { name, value, read in
                        if read < value { failure.record("\(name): a subscriber called with \(value) read \(read)") }
                    }
                    for token in tokens { token.cancel() }
                }
            default:
                let readers = scopes.readers
                var last = Array(repeating: 0, count: readers.count)
                while dispatchersLeft.load(ordering: .sequentiallyConsistent) > 0 {
                    for (index, reader) in readers.enumerated() {
                        let value = reader.read()
                        if value < last[index] {
                            failure.record("\(reader.name): read \(last[index]), then \(value)")
                        }
                        last[index] = value
                    }
                }
            }
        }
        #expect(failure.value == nil)
        // Every scope ends at the root's count, once the queued work is done.
        let total = 2 * ticksPerDispatcher
        #expect(await eventually { scopes.readers.allSatisfy { $0.read() == total } })
    }

    /// Subscribers (kept for the whole run this time) of every scope, called on the processor while threads
    /// dispatch, read the scope's `state` at the value they were called with or later.
    @Test func aScopeSubscriberNeverReadsAStateOlderThanItsValue() async {
        let scopes = ReadThroughScopes()
        let failure = FirstFailure()
        let calls = Atomic<Int>(0)
        let tokens = scopes.subscribeAll { name, value, read in
            calls.add(1, ordering: .relaxed)
            if read < value { failure.record("\(name): a subscriber called with \(value) read \(read)") }
        }
        await onNewThreads(3) { _ in
            for _ in 0..<2_000 { scopes.root.dispatch(.tick) }
        }
        // The callers leave the rest of the queue to a background thread, which the whole suite under
        // ThreadSanitizer on two cores has kept waiting for more than a minute.
        #expect(await eventually(timeout: .seconds(180)) { scopes.readers.allSatisfy { $0.read() == 6_000 } })
        #expect(failure.value == nil)
        #expect(calls.load(ordering: .relaxed) >= 4)
        for token in tokens { token.cancel() }
    }
}
