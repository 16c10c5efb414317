import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Counts how many instances live, to catch leaks and over-releases of selected objects.
private let liveRefs = SGCounter()
private let madeRefs = SGCounter()
private let endedRefs = SGCounter()

/// An object selected from the state, counted while it lives.
private final class SGRef: Equatable, Sendable, CustomStringConvertible {
    let id: Int
    init(_ id: Int) {
        self.id = id
        liveRefs.add()
        madeRefs.add()
    }
    deinit {
        liveRefs.add(-1)
        endedRefs.add()
    }
    static func == (a: SGRef, b: SGRef) -> Bool { a.id == b.id }
    var description: String { "SGRef(\(id))" }
}

// Shapes of state for the offset read.

/// A wrapped property: its storage is not the value.
@propertyWrapper private struct SGClamped: Equatable, Sendable {
    var stored: Int
    init(wrappedValue: Int) { stored = wrappedValue }
    var wrappedValue: Int {
        get { stored }
        set { stored = min(newValue, 100) }
    }
}

private enum SGPayload: Equatable, Sendable {
    case none
    case number(Int)
    case text(String)
    case object(SGRef)
    case pair(Int8, String)
}

/// Holds an object weakly: a struct with a `weak` field, read as a whole at its offset.
private struct SGWeakHolder: Equatable, Sendable {
    weak var object: SGRef?
    var tag: Int
    static func == (a: SGWeakHolder, b: SGWeakHolder) -> Bool { a.object === b.object && a.tag == b.tag }
}

/// An existential and a closure wrapped in an Equatable struct.
private struct SGErased: Equatable, Sendable {
    var value: any Sendable
    var make: @Sendable () -> Int
    var id: Int
    static func == (a: SGErased, b: SGErased) -> Bool { a.id == b.id && a.make() == b.make() }
}

private struct SGGeneric<T: Sendable>: Sendable {
    var small: Int8 = 1
    var value: T
    var after: Int16 = 2
}
extension SGGeneric: Equatable where T: Equatable {}

private struct SGShapes: Sendable {
    var a: Int8 = 1
    weak var weakRef: SGRef?
    unowned(unsafe) var unsafeRef: SGRef
    unowned var unownedRef: SGRef
    @SGClamped var clamped: Int = 5
    var observed: Int = 3 {
        didSet { observedChanges += 1 }
    }
    var observedChanges = 0
    let constant: String
    var payload: SGPayload = .none
    var payloads: [SGPayload] = []
    var nested: (Int8, (String, Int8, (Double, SGRef?))) = (0, ("", 0, (0, nil)))
    var holder = SGWeakHolder(object: nil, tag: 0)
    var erased = SGErased(value: 0, make: { 0 }, id: 0)
    var vector = SIMD4<Float>(1, 2, 3, 4)
    var generic: SGGeneric<String> = SGGeneric(value: "g")
    var genericRef: SGGeneric<SGRef?> = SGGeneric(value: nil)
    var text = "text"
    var range: Range<Int> = 0..<1
    var optional: Int?
    var function: @Sendable (Int) -> Int = { $0 }

    init(ref: SGRef, constant: String) {
        self.unsafeRef = ref
        self.unownedRef = ref
        self.constant = constant
    }
}

private final class SGClassState: Equatable, Sendable {
    let x: Int
    let name = "class"
    init(x: Int) { self.x = x }
    static func == (a: SGClassState, b: SGClassState) -> Bool { a === b }
}

/// The offset read must give what `state[keyPath:]` gives; the read is made as a store would make it, in a generic
/// context that knows neither type.
private typealias SGOptionalInt = Int?

@inline(never)
private func read<S, V>(_ keyPath: any KeyPath<S, V> & Sendable, _ state: S) -> V {
    StateSelector<S, V>.keyPath(keyPath).read(state)
}

@inline(never)
private func offset<S, V>(_ keyPath: any KeyPath<S, V> & Sendable) -> Int? {
    MemoryLayout<S>.offset(of: keyPath)
}

/// Subscribes in a generic context, changes the state to each of `states` in turn, and returns what was heard.
@inline(never)
private func heardThroughStore<S: Sendable, V: Equatable & Sendable>(
    _ keyPath: any KeyPath<S, V> & Sendable, states: [S]
) -> [V] {
    let store = Store(initialState: states[0]) { (state: inout S, next: S) in state = next }
    let heard = SGHeard<V>()
    let token = store.subscribe(keyPath) { heard.append($0) }
    for state in states.dropFirst() { store.dispatch(state) }
    token.cancel()
    return heard.values
}

/// What a subscriber should hear: the first selection, then each that differs from the previous.
private func expected<S, V: Equatable>(_ keyPath: KeyPath<S, V>, states: [S]) -> [V] {
    var result: [V] = []
    for state in states {
        let value = state[keyPath: keyPath]
        if result.last != value { result.append(value) }
    }
    return result
}

/// A selection by key path is read at the stored property's offset where one exists: it reads the same as
/// `state[keyPath:]` for every shape of stored property and root, subscribers of those shapes hear their changes, and
/// selected objects are neither leaked nor released twice.
@Suite("Key paths read by offset: every shape of stored property, selected objects counted", .serialized)
struct KeyPathOffsetReadTests {
    /// Weak, unowned, wrapped, observed, constant, enum, tuple, existential, closure, generic, SIMD and optional
    /// properties, and roots that are not plain structs: the read gives what `state[keyPath:]` gives, and storage
    /// whose bytes are not the value has no offset.
    @Test func unusualStoredPropertiesReadTheSameByOffsetAsByKeyPath() {
        let ref = SGRef(1)
        let other = SGRef(2)
        withExtendedLifetime((ref, other)) {
            var state = SGShapes(ref: ref, constant: "constant")
            state.weakRef = ref
            state.payload = .object(other)
            state.payloads = [.text("a"), .pair(3, "b"), .object(ref)]
            state.nested = (7, ("nested", 9, (2.5, other)))
            state.holder = SGWeakHolder(object: other, tag: 4)
            state.erased = SGErased(value: "existential", make: { 42 }, id: 1)
            state.genericRef = SGGeneric(value: ref)
            state.optional = 12
            state.function = { $0 * 3 }

            // Offsets must not exist for storage whose bytes are not the value's (weak, unowned, wrapped, observed).
            #expect(offset(\SGShapes.weakRef) == nil)
            #expect(offset(\SGShapes.unownedRef) == nil)
            #expect(offset(\SGShapes.unsafeRef) == nil)
            #expect(offset(\SGShapes.clamped) == nil)
            #expect(offset(\SGClassState.x) == nil)
            #expect(offset(\SGClassState.name) == nil)

            #expect(read(\SGShapes.a, state) == state.a)
            #expect(read(\SGShapes.weakRef, state) === state.weakRef)
            #expect(read(\SGShapes.unsafeRef, state) === ref)
            #expect(read(\SGShapes.unownedRef, state) === ref)
            #expect(read(\SGShapes.clamped, state) == state.clamped)
            #expect(read(\SGShapes.observed, state) == state.observed)
            #expect(read(\SGShapes.constant, state) == "constant")
            #expect(read(\SGShapes.payload, state) == .object(other))
            #expect(read(\SGShapes.payloads, state) == state.payloads)
            #expect(read(\SGShapes.nested.0, state) == 7)
            #expect(read(\SGShapes.nested.1.0, state) == "nested")
            #expect(read(\SGShapes.nested.1.1, state) == 9)
            #expect(read(\SGShapes.nested.1.2.0, state) == 2.5)
            #expect(read(\SGShapes.nested.1.2.1, state) === other)
            #expect(read(\SGShapes.holder, state) == state.holder)
            #expect(read(\SGShapes.holder, state).object === other)
            #expect(read(\SGShapes.holder.object, state) === other)
            #expect(read(\SGShapes.erased, state) == state.erased)
            #expect(read(\SGShapes.erased.value, state) as? String == "existential")
            #expect(read(\SGShapes.erased.make, state)() == 42)
            #expect(read(\SGShapes.vector, state) == state.vector)
            #expect(read(\SGShapes.generic, state) == state.generic)
            #expect(read(\SGShapes.generic.value, state) == "g")
            #expect(read(\SGShapes.generic.after, state) == 2)
            #expect(read(\SGShapes.genericRef.value, state) === ref)
            #expect(read(\SGShapes.text, state) == "text")
            #expect(read(\SGShapes.range, state) == 0..<1)
            #expect(read(\SGShapes.range.upperBound, state) == 1)
            #expect(read(\SGShapes.optional, state) == 12)
            #expect(read(\SGShapes.optional?.bitWidth, state) == 64)
            #expect(read(\SGShapes.optional!, state) == 12)
            #expect(read(\SGShapes.function, state)(5) == 15)

            // Roots that are not plain structs.
            #expect(read(\[Int].self, [1, 2, 3]) == [1, 2, 3])
            #expect(read(\[Int].count, [1, 2, 3]) == 3)
            #expect(read(\String.self, "root") == "root")
            #expect(read(\String.utf8.count, "root") == 4)
            #expect(read(\Int?.self, 5) == 5)
            #expect(read(\Int?.self, nil) == nil)
            #expect(read(\SGOptionalInt.?.description, 5) == "5")
            let object = SGClassState(x: 9)
            #expect(read(\SGClassState.self, object) === object)
            #expect(read(\SGClassState.x, object) == 9)
            #expect(read(\SGClassState.name, object) == "class")
            #expect(read(\(Int8, String).1, (1, "tuple")) == "tuple")
            #expect(read(\(Int8, (Int8, String)).1.1, (1, (2, "deep"))) == "deep")
            #expect(read(\SGPayload.self, .pair(1, "p")) == .pair(1, "p"))
            let existential: any Sendable = SGRef(3)
            #expect((read(\(any Sendable).self, existential) as? SGRef)?.id == 3)
            #expect(read(\SGGeneric<SGRef?>.value, SGGeneric(value: ref)) === ref)
            #expect(read(\SGGeneric<(Int8, String)>.value.1, SGGeneric(value: (1, "gt"))) == "gt")
            #expect(read(\Range<Int>.lowerBound, 3..<8) == 3)
            #expect(read(\Duration.self, .seconds(3)) == .seconds(3))
        }
    }

    /// Subscribers of those shapes, in a store made in a generic context, hear the first selection, then each change.
    @Test func subscribersOfUnusualShapesHearTheirChangesInAGenericStore() {
        let refs = (0..<4).map(SGRef.init)
        withExtendedLifetime(refs) {
            var states: [SGShapes] = []
            var state = SGShapes(ref: refs[0], constant: "c")
            for step in 0..<8 {
                state.a = Int8(step % 3)
                state.weakRef = refs[step % 4]
                state.clamped = step * 40
                state.observed = step / 2
                let payloads: [SGPayload] = [.none, .number(step), .text("t\(step % 2)"), .object(refs[step % 4])]
                state.payload = payloads[step % 4]
                state.payloads = step.isMultiple(of: 2) ? [.pair(1, "x")] : [.object(refs[1])]
                state.nested.1.0 = "n\(step / 3)"
                state.nested.1.2.1 = refs[step % 2]
                state.holder = SGWeakHolder(object: refs[step % 3], tag: step / 4)
                state.erased = SGErased(value: step, make: { [step] in step / 2 }, id: step % 2)
                state.vector.z = Float(step / 2)
                state.generic.value = "g\(step % 2)"
                state.genericRef.value = step.isMultiple(of: 3) ? nil : refs[step % 4]
                state.text = String(repeating: "s", count: step % 3 + 20)
                state.range = 0..<(step / 2)
                state.optional = step.isMultiple(of: 2) ? nil : step
                states.append(state)
            }
            func check<V: Equatable & Sendable>(_ keyPath: any KeyPath<SGShapes, V> & Sendable, _ line: Int = #line) {
                let heard = heardThroughStore(keyPath, states: states)
                let wanted = expected(keyPath, states: states)
                #expect(heard == wanted, "line \(line)")
            }
            check(\.a)
            check(\.weakRef)
            check(\.clamped)
            check(\.observed)
            check(\.payload)
            check(\.payloads)
            check(\.nested.1.0)
            check(\.nested.1.2.1)
            check(\.holder)
            check(\.holder.tag)
            check(\.erased)
            check(\.vector)
            check(\.generic)
            check(\.generic.value)
            check(\.genericRef.value)
            check(\.text)
            check(\.range)
            check(\.range.upperBound)
            check(\.optional)
            check(\.constant)
            check(\.unownedRef.id)
        }
    }

    /// Arrays, strings, optionals, enums, classes, generic structs and tuples as the state: subscribers hear their
    /// changes.
    @Test func rootsThatAreNotStructsHearTheirChanges() {
        #expect(heardThroughStore(\[Int].self, states: [[1], [1], [1, 2], []]) == [[1], [1, 2], []])
        #expect(heardThroughStore(\String.self, states: ["a", "a", String(repeating: "b", count: 40)])
            == ["a", String(repeating: "b", count: 40)])
        #expect(heardThroughStore(\Int?.self, states: [nil, 1, 1, nil]) == [nil, 1, nil])
        #expect(heardThroughStore(\SGPayload.self, states: [.none, .text("x"), .text("x"), .pair(1, "y")])
            == [.none, .text("x"), .pair(1, "y")])
        let a = SGClassState(x: 1)
        let b = SGClassState(x: 2)
        #expect(heardThroughStore(\SGClassState.x, states: [a, a, b]) == [1, 2])
        #expect(heardThroughStore(\SGClassState.self, states: [a, a, b]).map(\.x) == [1, 2])
        #expect(heardThroughStore(\SGGeneric<String>.value, states: [SGGeneric(value: "1"), SGGeneric(value: "2")])
            == ["1", "2"])
        // A tuple root (not Equatable as a whole, but its elements are).
        let tuples: [(Int8, String)] = [(1, "x"), (2, "x"), (2, "y")]
        #expect(heardThroughStore(\(Int8, String).1, states: tuples) == ["x", "y"])
        #expect(heardThroughStore(\(Int8, String).0, states: tuples) == [1, 2])
    }

    /// Objects selected by key paths (directly, in arrays, generics, enums, tuples, weak holders) while thousands of
    /// states pass: every object made ends exactly once, and the store ends.
    @Test func selectedObjectsAreNeitherLeakedNorOverReleased() async {
        let madeBefore = madeRefs.current
        let endedBefore = endedRefs.current
        struct Objects: Equatable, Sendable {
            var ref = SGRef(-1)
            var refs: [SGRef] = []
            var generic = SGGeneric<SGRef?>(value: nil)
            var payload: SGPayload = .none
            var nested: (Int8, SGRef?) = (0, nil)
            var holder = SGWeakHolder(object: nil, tag: 0)
            static func == (a: Objects, b: Objects) -> Bool {
                a.ref == b.ref && a.refs == b.refs && a.generic == b.generic && a.payload == b.payload
                    && a.nested.0 == b.nested.0 && a.nested.1 == b.nested.1 && a.holder == b.holder
            }
        }
        weak var weakStore: Store<Objects, Int>?
        do {
            let store = Store(initialState: Objects()) { (state: inout Objects, step: Int) in
                state.ref = SGRef(step)
                state.refs = [SGRef(step), SGRef(step + 1)]
                state.generic.value = step.isMultiple(of: 2) ? SGRef(step) : nil
                state.payload = .object(SGRef(step))
                state.nested = (Int8(step % 100), SGRef(step))
                state.holder = SGWeakHolder(object: state.ref, tag: step)
            }
            weakStore = store
            let total = SGCounter()
            var tokens: [SubscriptionToken] = []
            tokens.append(store.subscribe(\.ref) { _ in total.add() })
            tokens.append(store.subscribe(\.refs) { _ in total.add() })
            tokens.append(store.subscribe(\.generic.value) { _ in total.add() })
            tokens.append(store.subscribe(\.payload) { _ in total.add() })
            tokens.append(store.subscribe(\.nested.1) { _ in total.add() })
            tokens.append(store.subscribe(\.holder) { holder in
                // The selection's weak reference must still lead to the state's object while it is current.
                _ = holder.object?.id
                total.add()
            })
            tokens.append(store.subscribe(\.self) { _ in total.add() })
            for step in 0..<2_000 {
                store.dispatch(step)
                if step.isMultiple(of: 100) {
                    // Churn: a subscriber of a shared key path, cancelled at once (the group stays, empty).
                    store.subscribe(\.ref) { _ in total.add() }.cancel()
                }
            }
            #expect(total.current > 7 * 1_900)
            for token in tokens { token.cancel() }
        }
        #expect(await waitUntil { weakStore == nil })
        // Every object made during the test ended exactly once (an over-release would crash or end one twice).
        #expect(await waitUntil { endedRefs.current - endedBefore == madeRefs.current - madeBefore })
        #expect(endedRefs.current - endedBefore == madeRefs.current - madeBefore)
    }
}
