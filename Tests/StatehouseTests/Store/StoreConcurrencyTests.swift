import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Many threads dispatching to one store, and subscribing while others dispatch. Serialized: each test keeps several
/// threads busy.
@Suite("Store under concurrency", .serialized)
struct StoreConcurrencyTests {
    @Test func eightThreadsDispatchingApplyEveryActionExactlyOnce() async {
        let store = makeCounterStore()
        let seen = Recorder<Int>()
        let token = store.subscribe(\.count) { seen.append($0) }
        let perThread = 1_000
        await onNewThreads(8) { _ in
            for _ in 0..<perThread { store.dispatch(.increment) }
        }
        // A caller applies only its share of other threads' actions; a background thread may still be at work.
        // A generous deadline: alone this takes about a second, but the whole suite in parallel on two cores once
        // held the background thread for more than 30 s.
        let total = 8 * perThread
        #expect(await eventually(timeout: .seconds(120)) { store.state.count == total })
        // The state shows the last action before its subscriber is called with it: wait for the call too.
        #expect(await eventually { seen.elements.last == total })
        let seenInOrder = seen.elements == Array(0...total)
        #expect(seenInOrder, "\(seen.elements.count) values seen, the first out of place at \(seen.elements.enumerated().first { $0.offset != $0.element }?.offset ?? -1)")
        token.cancel()
    }

    @Test func subscribingWhileOthersDispatchNeverShowsAStaleOrRepeatedValue() async {
        let store = makeCounterStore()
        let violations = Recorder<String>()
        await onNewThreads(4) { thread in
            if thread == 0 {
                for _ in 0..<20_000 { store.dispatch(.increment) }
            } else {
                for _ in 0..<300 {
                    let seen = Recorder<Int>()
                    let token = store.subscribe(\.count) { seen.append($0) }
                    token.cancel()
                    let values = seen.elements
                    if zip(values, values.dropFirst()).contains(where: { $0 >= $1 }) {
                        violations.append("\(values)")
                    }
                }
            }
        }
        #expect(violations.elements.isEmpty)
    }
}
