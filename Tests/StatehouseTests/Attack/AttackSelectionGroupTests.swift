import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

// Attacks on the change that made selection groups objects, read key paths by offset (StateSelector), and registers
// subscribers of an idle store without a closure (Store.runIfIdle).

// MARK: - Helpers

/// A thread-safe list of what a listener heard.
private final class SGHeard<T: Sendable>: Sendable {
    private let storage = Locked<[T]>([])
    func append(_ value: T) { storage.withLock { $0.append(value) } }
    var values: [T] { storage.withLock { $0 } }
    var count: Int { storage.withLock { $0.count } }
}

/// A thread-safe flag or counter.
private final class SGCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add(_ n: Int = 1) { value.add(n, ordering: .sequentiallyConsistent) }
    var current: Int { value.load(ordering: .sequentiallyConsistent) }
}

/// A thread-safe holder of one value (a token, a store reference).
private final class SGSlot<T: Sendable>: Sendable {
    private let storage: Locked<T?>
    init(_ value: T? = nil) { storage = Locked(value) }
    func set(_ value: T?) { storage.withLock { $0 = value } }
    func take() -> T? { storage.withLock { value in defer { value = nil }; return value } }
    var value: T? { storage.withLock { $0 } }
}

/// Counts how many instances live, to catch leaks and over-releases of selected objects.
private let liveRefs = SGCounter()
private let madeRefs = SGCounter()
private let endedRefs = SGCounter()

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

private func waitUntil(_ seconds: Int = 60, _ condition: () -> Bool) async -> Bool {
    await eventually(timeout: .seconds(seconds), every: .milliseconds(2), condition)
}

/// Runs `body` on a thread of its own and says whether it returned within `seconds` (a deadlock detector).
private func finishes(within seconds: Int = 30, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return await offThePool { done.wait(timeout: .now() + .seconds(seconds)) == .success }
}

// MARK: - SGShapes of state for the offset read

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

private enum SGToggle: Sendable { case increment, hold, subscribeNow, noop }

private struct SGTally: Equatable, Sendable {
    var count = 0
    var holds = 0
    var rows = [Int](repeating: 0, count: 100)
    var pair: (Int, Int8) = (0, 0)
    var child = SGChild()
    static func == (a: SGTally, b: SGTally) -> Bool {
        a.count == b.count && a.holds == b.holds && a.rows == b.rows && a.pair == b.pair && a.child == b.child
    }
}

private struct SGChild: Equatable, Sendable {
    var value = 0
    var name = ""
}

/// A store that a `.hold` keeps busy without its state lock held (see `attackStoreWithABlockingSubscriber`).
private func storeWithABlockingSubscriber() -> (
    store: Store<SGTally, SGToggle>, blocker: SubscriptionToken, entered: DispatchSemaphore, release: DispatchSemaphore
) {
    attackStoreWithABlockingSubscriber(SGTally(), reducer: tallyReducer, holds: \.holds)
}

private func tallyReducer(_ state: inout SGTally, _ action: SGToggle) {
    if action == .hold { state.holds += 1 }
    switch action {
    case .increment, .hold, .subscribeNow:
        state.count += 1
        state.rows[state.count % 100] = state.count
        state.pair.0 = state.count
        state.child.value = state.count
    case .noop:
        break
    }
}

private let tallyKeyPaths: [any KeyPath<SGTally, Int> & Sendable] = [\.count, \.pair.0, \.child.value]

// MARK: - Suite

@Suite(.serialized)
struct AttackSelectionGroupTests {
    // MARK: Offset reads

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

    // MARK: Reference counting of selected objects

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

    // MARK: Groups under concurrency

    @Test func subscribersChurningOnSharedAndOwnGroupsWhileOthersDispatchSeeNoStaleRepeatedOrLateValues() async {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let dispatchers = 2
        let perDispatcher = 3_000
        let violations = SGHeard<String>()
        let steady = SGHeard<Int>()
        let steadyToken = store.subscribe(\.count) { steady.append($0) }
        await onNewThreads(dispatchers + 4) { thread in
            if thread < dispatchers {
                for _ in 0..<perDispatcher { store.dispatch(.increment) }
                return
            }
            for round in 0..<400 {
                let before = store.state.count
                let heard = SGHeard<Int>()
                let cancelled = Atomic<Bool>(false)
                let listener: @Sendable (Int) -> Void = { value in
                    if cancelled.load(ordering: .sequentiallyConsistent) {
                        violations.append("thread \(thread) round \(round): called after cancel with \(value)")
                    }
                    heard.append(value)
                }
                let token: SubscriptionToken
                switch (thread + round) % 5 {
                case 0, 1, 2:
                    token = store.subscribe(tallyKeyPaths[(thread + round) % 3], listener)
                case 3:
                    token = store.subscribe(select: { $0.count }, isDuplicate: ==, listener)
                default:
                    let row = round % 100
                    token = store.subscribe(\.rows[row]) { _ in listener(store.state.count) }
                }
                if round.isMultiple(of: 3) { store.dispatch(.noop) }
                token.cancel()
                cancelled.store(true, ordering: .sequentiallyConsistent)
                let values = heard.values
                if (thread + round) % 5 != 4 {
                    if let first = values.first, first < before {
                        violations.append("thread \(thread) round \(round): first value \(first) older than \(before)")
                    }
                    if zip(values, values.dropFirst()).contains(where: { $0 >= $1 }) {
                        violations.append("thread \(thread) round \(round): not strictly increasing \(values)")
                    }
                }
            }
        }
        let total = dispatchers * perDispatcher
        #expect(await waitUntil { steady.values.last == total })
        let values = steady.values
        #expect(values.first == 0)
        #expect(!zip(values, values.dropFirst()).contains(where: { $0 >= $1 }))
        #expect(violations.values.isEmpty, "\(violations.values.prefix(10))")
        steadyToken.cancel()
    }

    @Test func manyDistinctKeyPathsDroppedAndReusedWhileDispatchingKeepEachSubscriberOnItsOwnSelection() async {
        // Over 64 keyed groups, then none: `dropEmptyKeyedGroups` and `dropAllGroups` run while other threads
        // subscribe and dispatch, and group numbers are given to new groups of other key paths and types.
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let violations = SGHeard<String>()
        let dispatchesDone = SGCounter()
        await onNewThreads(4) { thread in
            if thread == 0 {
                for _ in 0..<3_000 { store.dispatch(.increment) }
                dispatchesDone.add()
                return
            }
            for round in 0..<150 {
                var tokens: [SubscriptionToken] = []
                let hearers = (0..<70).map { _ in SGHeard<String>() }
                for index in 0..<70 {
                    let row = (index + thread * 7 + round) % 100
                    let heard = hearers[index]
                    if index.isMultiple(of: 7) {
                        // A different selected type under the same group numbers: a wrong group would be read
                        // through the wrong type.
                        tokens.append(store.subscribe(\.child.name) { heard.append("name:\($0)") })
                    } else if index.isMultiple(of: 5) {
                        tokens.append(store.subscribe(select: { "own:\($0.rows[row])" }, isDuplicate: ==) {
                            heard.append($0)
                        })
                    } else {
                        tokens.append(store.subscribe(\.rows[row]) { heard.append("row\(row):\($0)") })
                    }
                }
                // The store may be busy on another thread: the first values come once it gets to the registrations.
                let allHeard = attackSpin(timeout: .seconds(60)) { hearers.allSatisfy { $0.count > 0 } }
                if !allHeard { violations.append("thread \(thread) round \(round): a first value never came") }
                for (index, heard) in hearers.enumerated() {
                    let row = (index + thread * 7 + round) % 100
                    let prefix = index.isMultiple(of: 7) ? "name:" : index.isMultiple(of: 5) ? "own:" : "row\(row):"
                    let values = heard.values
                    if let bad = values.first(where: { !$0.hasPrefix(prefix) }) {
                        violations.append("thread \(thread) index \(index): heard \(bad), wanted \(prefix)…")
                    }
                    if values.count != Set(values).count {
                        violations.append("thread \(thread) index \(index): a value twice: \(values)")
                    }
                }
                for token in tokens.shuffled() { token.cancel() }
            }
        }
        #expect(dispatchesDone.current == 1)
        #expect(violations.values.isEmpty, "\(violations.values.prefix(10))")
        let final = SGHeard<Int>()
        let token = store.subscribe(\.rows[3000 % 100]) { final.append($0) }
        #expect(final.values == [3_000])
        token.cancel()
    }

    // MARK: Re-entrancy

    @Test func aSubscriberAddedInsideAListenerHearsTheCurrentValueOnceThenEveryChange() {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let inner = SGHeard<Int>()
        let innerOwn = SGHeard<Int>()
        let innerScoped = SGHeard<Int>()
        let tokens = SGSlot<[SubscriptionToken]>([])
        let child = store.scope(state: \.child, action: { (_: SGToggle) in SGToggle.increment })
        let outer = store.subscribe(\.count) { count in
            guard count == 1 else { return }
            // Subscribe, then dispatch: the registration is queued first, so the first value is 1.
            let a = store.subscribe(\.count) { inner.append($0) }
            let b = store.subscribe(select: { $0.count }, isDuplicate: ==) { innerOwn.append($0) }
            let c = child.subscribe(\.value) { innerScoped.append($0) }
            tokens.set([a, b, c])
            store.dispatch(.increment)
        }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(inner.values == [1, 2, 3])
        #expect(innerOwn.values == [1, 2, 3])
        #expect(innerScoped.values == [1, 2, 3])
        outer.cancel()
        for token in tokens.take() ?? [] { token.cancel() }
    }

    @Test func aSubscriberAddedInsideAListenerAfterAQueuedDispatchStartsFromTheStateItIsRegisteredIn() {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let inner = SGHeard<Int>()
        let tokens = SGSlot<[SubscriptionToken]>([])
        let outer = store.subscribe(\.count) { count in
            guard count == 1 else { return }
            // Dispatch, then subscribe: the action is applied before the registration, which starts from 2.
            store.dispatch(.increment)
            tokens.set([store.subscribe(\.count) { inner.append($0) }])
        }
        store.dispatch(.increment)
        store.dispatch(.increment)
        #expect(inner.values == [2, 3])
        outer.cancel()
        for token in tokens.take() ?? [] { token.cancel() }
    }

    @Test func aSubscriberAddedInsideTheReducerHearsTheStateAfterThatActionOnce() {
        let storeSlot = SGSlot<Store<SGTally, SGToggle>>()
        let tokens = SGSlot<[SubscriptionToken]>([])
        let inner = SGHeard<Int>()
        let store = Store(initialState: SGTally()) { (state: inout SGTally, action: SGToggle) in
            tallyReducer(&state, action)
            if action == .subscribeNow, let store = storeSlot.value {
                tokens.set([store.subscribe(\.count) { inner.append($0) }])
            }
        }
        storeSlot.set(store)
        store.dispatch(.increment)
        store.dispatch(.subscribeNow)
        store.dispatch(.increment)
        store.dispatch(.noop)
        #expect(inner.values == [2, 3])
        for token in tokens.take() ?? [] { token.cancel() }
        storeSlot.set(nil)
    }

    @Test func listenersCancellingAndDispatchingInsideDeliveryKeepTheRules() {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let selfCancel = SGHeard<Int>()
        let victim = SGHeard<Int>()
        let mine = SGSlot<SubscriptionToken>()
        let victimToken = SGSlot<SubscriptionToken>()
        // The first subscriber cancels itself at 2 and the victim (a later subscriber of the same group) at 3.
        let first = store.subscribe(\.count) { count in
            selfCancel.append(count)
            if count == 2 { mine.take()?.cancel() }
        }
        mine.set(first)
        let killer = store.subscribe(\.count, initial: false) { count in
            if count == 3 { victimToken.take()?.cancel() }
            if count < 5 { store.dispatch(.increment) }
        }
        victimToken.set(store.subscribe(\.count) { victim.append($0) })
        store.dispatch(.increment)
        #expect(store.state.count == 5)
        #expect(selfCancel.values == [0, 1, 2])
        // The victim sits after the killer in the group: it must not hear 3, which the killer cancelled it during.
        #expect(victim.values == [0, 1, 2])
        killer.cancel()
    }

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

    // MARK: runIfIdle: a store busy on another thread

    @Test func aSubscriberOfAStoreBusyOnAnotherThreadHearsTheStateAfterTheBusyActionFirstAndOnce() async {
        for delivery in [Delivery.synchronous, .queue(DispatchQueue(label: "attack.selection.queue"))] {
            let (store, blocker, entered, release) = storeWithABlockingSubscriber()
            defer { blocker.cancel() }
            let heard = SGHeard<Int>()
            let heardOwn = SGHeard<Int>()
            let heardLate = SGHeard<Int>()
            let tokens = SGSlot<[SubscriptionToken]>([])
            let holder = Thread { store.dispatch(.hold) }
            holder.start()
            #expect(await attackWait(for: entered))
            // The store is busy on `holder`: both registrations are queued, behind the held action.
            let token = await offThePool { store.subscribe(\.count, on: delivery) { heard.append($0) } }
            let own = await offThePool {
                store.subscribe(select: { $0.count }, isDuplicate: ==, on: delivery) { heardOwn.append($0) }
            }
            #expect(heard.values.isEmpty)
            #expect(heardOwn.values.isEmpty)
            // An action queued after the registrations comes after the first value.
            let dispatched = DispatchSemaphore(value: 0)
            Thread {
                store.dispatch(.increment)
                dispatched.signal()
            }.start()
            // And a subscriber queued between them, with initial: false, hears only the increment.
            let late = await offThePool {
                store.subscribe(\.count, initial: false, on: delivery) { heardLate.append($0) }
            }
            tokens.set([token, own, late])
            release.signal()
            #expect(await attackWait(for: dispatched))
            #expect(await waitUntil { heard.values.last == 2 && heardOwn.values.last == 2 })
            #expect(heard.values == [1, 2])
            #expect(heardOwn.values == [1, 2])
            #expect(await waitUntil { heardLate.values.last == 2 || store.state.count == 2 })
            #expect(heardLate.values == [2] || heardLate.values == [])
            for token in tokens.take() ?? [] { token.cancel() }
        }
    }

    @Test func aSubscriptionCancelledBeforeItsQueuedRegistrationRunsIsNeverCalledAndLetsTheStoreGo() async {
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        weak var weakStore: Store<SGTally, SGToggle>?
        let heard = SGHeard<Int>()
        do {
            // Busy without holding the state lock: a subscriber blocks on the processor (a reducer blocking would
            // hold the lock, and cancel() rightly waits for it).
            let store = Store(initialState: SGTally(), reducer: tallyReducer)
            let blocker = store.subscribe(\.holds, initial: false) { _ in
                entered.signal()
                release.wait()
            }
            defer { blocker.cancel() }
            weakStore = store
            let holder = Thread { store.dispatch(.hold) }
            holder.start()
            #expect(await attackWait(for: entered))
            let keyed = await offThePool { store.subscribe(\.count) { heard.append($0) } }
            let own = await offThePool { store.subscribe(select: { $0.count }, isDuplicate: ==) { heard.append($0) } }
            keyed.cancel()
            own.cancel()
            release.signal()
        }
        #expect(await waitUntil { weakStore == nil })
        #expect(heard.values.isEmpty)
    }

    @Test func subscribersRacingBusyAndIdleStoresFromManyThreadsHearTheirFirstValueOnceAndInOrder() async {
        let store = Store(initialState: SGTally(), reducer: tallyReducer)
        let violations = SGHeard<String>()
        let keep = SGHeard<(Int, SGHeard<Int>)>()
        let tokens = SGHeard<SubscriptionToken>()
        let total = 4 * 1_500
        await onNewThreads(6) { thread in
            if thread < 4 {
                for _ in 0..<1_500 { store.dispatch(.increment) }
                return
            }
            for round in 0..<300 {
                let before = store.state.count
                let heard = SGHeard<Int>()
                if round.isMultiple(of: 2) {
                    tokens.append(store.subscribe(tallyKeyPaths[round % 3]) { heard.append($0) })
                } else {
                    tokens.append(store.subscribe(select: { $0.count }, isDuplicate: ==) { heard.append($0) })
                }
                keep.append((before, heard))
            }
        }
        #expect(await waitUntil { keep.values.allSatisfy { $0.1.values.last == total } })
        for (before, heard) in keep.values {
            let values = heard.values
            if let first = values.first, first < before {
                violations.append("first value \(first) older than \(before)")
            }
            if zip(values, values.dropFirst()).contains(where: { $0 >= $1 }) {
                violations.append("not strictly increasing: \(values.prefix(20))…")
            }
            if values.last != total { violations.append("never heard the last value: \(values.suffix(3))") }
        }
        #expect(violations.values.isEmpty, "\(violations.values.prefix(10))")
        for token in tokens.values { token.cancel() }
    }

    // MARK: runIfIdle through a scoped store

    @Test func scopedSubscribersAddedFromEveryPlaceHearTheirFirstValueOnceThenEachChange() async {
        let (store, blocker, entered, release) = storeWithABlockingSubscriber()
        defer { blocker.cancel() }
        let child = store.scope(state: \.child, action: { (action: SGToggle) in action })
        let idle = SGHeard<Int>()
        let fromParentListener = SGHeard<Int>()
        let fromChildListener = SGHeard<Int>()
        let whileBusy = SGHeard<Int>()
        let tokens = SGHeard<SubscriptionToken>()
        @Sendable func keep(_ token: SubscriptionToken) { tokens.append(token) }
        keep(child.subscribe(\.value) { idle.append($0) })
        keep(store.subscribe(\.count) { count in
            if count == 1 { keep(child.subscribe(\.value) { fromParentListener.append($0) }) }
        })
        keep(child.subscribe(\.value) { value in
            if value == 2 { keep(child.subscribe(\.value) { fromChildListener.append($0) }) }
        })
        child.dispatch(.increment)
        child.dispatch(.increment)
        let holder = Thread { store.dispatch(.hold) }
        holder.start()
        #expect(await attackWait(for: entered))
        keep(await offThePool { child.subscribe(\.value) { whileBusy.append($0) } })
        let dispatched = DispatchSemaphore(value: 0)
        Thread {
            child.dispatch(.increment)
            dispatched.signal()
        }.start()
        release.signal()
        #expect(await attackWait(for: dispatched))
        #expect(await waitUntil { whileBusy.values.last == 4 && idle.values.last == 4 })
        #expect(idle.values == [0, 1, 2, 3, 4])
        #expect(fromParentListener.values == [1, 2, 3, 4])
        #expect(fromChildListener.values == [2, 3, 4])
        #expect(whileBusy.values == [3, 4])
        for token in tokens.values { token.cancel() }
    }

    // MARK: Lifetime

    @Test func tokensKeepTheirStoreAliveAndLetItGoThroughEveryKindOfGroup() async {
        weak var weakStore: Store<SGTally, SGToggle>?
        let heard = SGHeard<Int>()
        var tokens: [SubscriptionToken] = []
        do {
            let store = Store(initialState: SGTally(), reducer: tallyReducer)
            weakStore = store
            tokens.append(store.subscribe(\.count) { heard.append($0) })
            tokens.append(store.subscribe(\.rows[7]) { heard.append($0) })
            tokens.append(store.subscribe(select: { $0.count }, isDuplicate: ==) { heard.append($0) })
            tokens.append(store.scope(state: \.child, action: { (a: SGToggle) in a }).subscribe(\.value) {
                heard.append($0)
            })
        }
        #expect(weakStore != nil)
        weakStore?.dispatch(.increment)
        #expect(heard.values.sorted() == [0, 0, 0, 0, 1, 1, 1])
        tokens.removeFirst().cancel()
        tokens.removeFirst().cancel()
        #expect(weakStore != nil)
        tokens = []  // released, not cancelled
        #expect(await waitUntil { weakStore == nil })
    }
}
