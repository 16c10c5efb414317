import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// Random programs of actions with effects, run through a `Store` and through a `TestStore`: the test store must
/// receive the actions in the order the store applied them, and end in the same state.
///
/// Effects that run in tasks wait at a gate; the driver lets one through at a time, in a fixed order, once the
/// store is idle, so that both runs are deterministic and comparable.
@Suite("TestStore matches the Store on random programs")
struct TestStorePropertyTests {
    @Test(arguments: 0..<40)
    func sameOrderAndState(seed: UInt64) async {
        let program = Program(seed: seed)
        let applied = await runOnStore(program)
        await runOnTestStore(program, expecting: applied)
    }

    /// The ids the store applied after each top-level action (the action itself first).
    private func runOnStore(_ program: Program) async -> [[Int]] {
        let gates = Gates()
        let store = Store(initialState: [Int](), reducer: program.reducer(gates: gates))
        var segments: [[Int]] = []
        for top in program.topLevel {
            let before = store.state.count
            store.dispatch(top)
            await gates.settle { await store.waitForQueuedWork() }
            segments.append(Array(store.state[before...]))
        }
        return segments
    }

    private func runOnTestStore(_ program: Program, expecting segments: [[Int]]) async {
        let gates = Gates()
        let store = TestStore(initialState: [Int](), reducer: program.reducer(gates: gates))
        for segment in segments {
            await store.send(segment[0]) { $0.append(segment[0]) }
            await gates.settle { await store.waitForQueuedWork() }
            for id in segment.dropFirst() {
                await store.receive(id, timeout: .seconds(120)) { $0.append(id) }
            }
        }
        await store.finish(timeout: .seconds(120))
        #expect(store.state == segments.flatMap { $0 })
    }
}

/// What each action's reducer returns: actions sent at once, and tasks that send actions.
private struct Program: Sendable {
    enum Part: Sendable {
        case send(Int)
        case run(id: Int, sends: [Int])
    }

    var topLevel: [Int] = []
    var parts: [Int: [Part]] = [:]

    init(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        var nextID = 0
        func newID() -> Int {
            defer { nextID += 1 }
            return nextID
        }
        func grow(_ id: Int, depth: Int) {
            guard depth < 3 else { return }
            var parts: [Part] = []
            for _ in 0..<random.next(below: 3) {
                if random.next(below: 2) == 0 {
                    let child = newID()
                    parts.append(.send(child))
                    grow(child, depth: depth + 1)
                } else {
                    let children = (0..<(1 + random.next(below: 2))).map { _ in newID() }
                    parts.append(.run(id: newID(), sends: children))
                    for child in children { grow(child, depth: depth + 1) }
                }
            }
            self.parts[id] = parts
        }
        for _ in 0..<(1 + random.next(below: 4)) {
            let top = newID()
            topLevel.append(top)
            grow(top, depth: 0)
        }
    }

    func reducer(gates: Gates) -> Reducer<[Int], Int> {
        let parts = self.parts
        return Reducer { state, id in
            state.append(id)
            return .merge((parts[id] ?? []).map { part in
                switch part {
                case .send(let child):
                    return .send(child)
                case .run(let runID, let sends):
                    gates.expect(runID)
                    return .run { send in
                        await gates.arrive(runID)
                        for child in sends { send(child) }
                        gates.done(runID)
                    }
                }
            })
        }
    }
}

/// Where the program's tasks wait; ``settle(barrier:)`` lets them through one at a time, lowest id first.
private final class Gates: Sendable {
    private struct Contents: Sendable {
        var expected: Set<Int> = []
        var waiting: [Int: CheckedContinuation<Void, Never>] = [:]
        var done: Set<Int> = []
    }

    private let contents = Locked(Contents())

    func expect(_ id: Int) {
        contents.withLock { _ = $0.expected.insert(id) }
    }

    func arrive(_ id: Int) async {
        await withCheckedContinuation { continuation in
            contents.withLock { $0.waiting[id] = continuation }
        }
    }

    func done(_ id: Int) {
        contents.withLock { _ = $0.done.insert(id) }
    }

    /// Lets the waiting tasks through one at a time until none is left, each once every started task waits; before
    /// each choice, `barrier` waits for the store to apply what was sent (an action queued behind a busy processor
    /// may start more tasks, which must be known before the next is chosen).
    func settle(barrier: () async -> Void) async {
        while true {
            await barrier()
            let allWaiting = await eventually(timeout: .seconds(120)) {
                contents.withLock { contents in
                    contents.expected.allSatisfy { contents.done.contains($0) || contents.waiting[$0] != nil }
                }
            }
            #expect(allWaiting)
            guard let (id, task) = contents.withLock({ contents in
                contents.waiting.min { $0.key < $1.key }.map { entry in
                    contents.waiting[entry.key] = nil
                    return (entry.key, entry.value)
                }
            }) else { return }
            task.resume()
            #expect(await eventually(timeout: .seconds(120)) { contents.withLock { $0.done.contains(id) } })
        }
    }
}
