import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A store's key-path selections read stored properties by offset and everything else through the key path
/// (`StateSelector.read`): both must read exactly what `state[keyPath:]` reads, and copy what they read correctly
/// (a value with references is retained once per copy, and released when the store is done with it).
@Suite("Store: key-path selections read what the key path reads")
struct StoreKeyPathSelectionTests {
    final class Box: Equatable, Sendable {
        let number: Int
        init(_ number: Int) { self.number = number }
        static func == (lhs: Box, rhs: Box) -> Bool { lhs === rhs }
    }

    struct Inner: Equatable, Sendable {
        var flag = false
        var label = "inner"
    }

    struct Rich: Equatable, Sendable {
        var small: Int8 = 0
        var count = 0
        var name = "start"
        var items: [Int] = [1, 2, 3]
        var inner = Inner()
        var pair: (Int, String) = (0, "pair")
        var box = Box(0)
        var maybe: Inner? = Inner()
        var doubled: Int { count * 2 }

        static func == (lhs: Rich, rhs: Rich) -> Bool {
            (lhs.small, lhs.count, lhs.name, lhs.items, lhs.inner)
                == (rhs.small, rhs.count, rhs.name, rhs.items, rhs.inner)
                && (lhs.pair.0, lhs.pair.1, lhs.box, lhs.maybe) == (rhs.pair.0, rhs.pair.1, rhs.box, rhs.maybe)
        }

        /// A step that changes some fields and not others, by `seed`.
        mutating func step(_ seed: Int) {
            if seed % 2 == 0 { count += 1 }
            if seed % 3 == 0 { name = "name \(seed)" }
            if seed % 5 == 0 { items.append(seed) }
            if seed % 7 == 0 { inner.flag.toggle() }
            if seed % 11 == 0 { inner.label += "!" }
            if seed % 13 == 0 { pair.1 = "pair \(seed)" }
            if seed % 17 == 0 { box = Box(seed) }
            if seed % 19 == 0 { maybe = maybe == nil ? Inner(flag: true, label: "back") : nil }
            small &+= 1
        }
    }

    /// Every shape of key path the offset read must take, and every shape it must leave to the key path.
    @Test func offsetsAreUsedExactlyForStoredInlineProperties() {
        let stored: [PartialKeyPath<Rich>] = [\.small, \.count, \.name, \.items, \.inner, \.inner.flag, \.inner.label,
                                               \.pair.0, \.pair.1, \.box, \.maybe, \Rich.self]
        let throughTheKeyPath: [PartialKeyPath<Rich>] = [\.doubled, \.maybe?.label, \.box.number, \.items[1],
                                                         \.items.count]
        for keyPath in stored { #expect(MemoryLayout<Rich>.offset(of: keyPath) != nil, "\(keyPath)") }
        for keyPath in throughTheKeyPath { #expect(MemoryLayout<Rich>.offset(of: keyPath) == nil, "\(keyPath)") }
    }

    @Test func theReadMatchesTheKeyPathForEveryShape() {
        var state = Rich()
        for seed in 0..<200 {
            state.step(seed)
            expectSameRead(\.small, state)
            expectSameRead(\.count, state)
            expectSameRead(\.name, state)
            expectSameRead(\.items, state)
            expectSameRead(\.inner, state)
            expectSameRead(\.inner.flag, state)
            expectSameRead(\.inner.label, state)
            expectSameRead(\.pair.0, state)
            expectSameRead(\.pair.1, state)
            expectSameRead(\.box, state)
            expectSameRead(\.maybe, state)
            expectSameRead(\Rich.self, state)
            expectSameRead(\.doubled, state)
            expectSameRead(\.maybe?.label, state)
            expectSameRead(\.box.number, state)
            expectSameRead(\.items[1], state)
        }
    }

    private func expectSameRead<Value: Equatable>(
        _ keyPath: any KeyPath<Rich, Value> & Sendable,
        _ state: Rich,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let read = StateSelector<Rich, Value>.keyPath(keyPath).read(state)
        #expect(read == state[keyPath: keyPath], "\(keyPath)", sourceLocation: sourceLocation)
    }

    /// Subscribers of each shape hear exactly the changes of what they select, with the value the key path reads.
    /// Scoped stores read their part with the same read: through their parent while nobody subscribes to them, and
    /// from their own copy, picked from each new state of the parent, once somebody does.
    @Test func subscribersAndScopedStoresOfEveryShapeSeeTheirSelection() {
        let store = Store(initialState: Rich()) { (state: inout Rich, seed: Int) in state.step(seed) }
        var checks: [() -> Void] = []
        var tokens: [SubscriptionToken] = []
        func watch<Value: Equatable & Sendable>(_ keyPath: any KeyPath<Rich, Value> & Sendable) {
            let heard = Recorder<Value>()
            tokens.append(store.subscribe(keyPath) { heard.append($0) })
            var expected = [store.state[keyPath: keyPath]]
            checks.append {
                let now = store.state[keyPath: keyPath]
                if now != expected.last { expected.append(now) }
                #expect(heard.elements == expected, "\(keyPath)")
            }
            for following in [false, true] {
                // A line of its own each: a scoped store is shared by the calls from one place with one key path.
                let child = store.scope(state: keyPath, action: { (seed: Int) in seed }, line: following ? 1 : 2)
                if following { tokens.append(child.subscribe { (_: Value) in }) }
                checks.append { #expect(child.state == store.state[keyPath: keyPath], "\(keyPath), \(following)") }
            }
        }
        watch(\.count)
        watch(\.name)
        watch(\.items)
        watch(\.inner)
        watch(\.inner.label)
        watch(\.pair.1)
        watch(\.box)
        watch(\.maybe)
        watch(\.doubled)
        watch(\.maybe?.label)
        watch(\.box.number)
        for seed in 0..<300 {
            store.dispatch(seed)
            checks.forEach { $0() }
        }
        tokens.forEach { $0.cancel() }
    }

    /// A selected object is retained by what keeps it (the state, the group's last selection) and released when
    /// they let it go: a copy by offset that failed to retain would free it early (a crash here, or a report under
    /// the sanitizers), one that retained twice would keep it forever.
    @Test func selectedObjectsAreReleasedOnceNothingHoldsThem() {
        weak var first: Box?
        weak var replaced: Box?
        do {
            let store = Store(initialState: Rich()) { (state: inout Rich, number: Int) in state.box = Box(number) }
            first = store.state.box
            let heard = Recorder<Int>()
            let token = store.subscribe(\.box) { heard.append($0.number) }
            for number in 1...1_000 { store.dispatch(number) }
            replaced = store.state.box
            #expect(first == nil)
            #expect(replaced?.number == 1_000)
            #expect(heard.elements == Array(0...1_000))
            token.cancel()
        }
        #expect(replaced == nil)
    }
}
