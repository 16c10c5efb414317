import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// The test store used from several tasks at once: it is `Sendable`, and tasks of one test may send to it at the
/// same time, as they may dispatch to a store.
@Suite("TestStore used from several tasks")
struct TestStoreConcurrentUseTests {
    enum Counting: Equatable, Sendable { case add(Int), echo(Int) }

    static let adder = Reducer<Int, Counting> { state, action in
        switch action {
        case .add(let amount):
            state += amount
            return .none
        case .echo:
            return .none
        }
    }

    /// Each task's `send` asserts the step of its own action. A `send` that finds its step after another task's must
    /// not take that task's step with it, as if skipped: the other `send` would wait 30 s for a step that is gone and
    /// fail with "The store did not apply .add(1) within 30 seconds: is a reducer stuck?".
    @Test func sendsFromSeveralTasksEachAssertTheirOwnStep() async {
        let store = TestStore(initialState: 0, reducer: Self.adder)
        let tasks = 4
        let sendsPerTask = 300
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    let amount = task + 1
                    for _ in 0..<sendsPerTask {
                        await store.send(.add(amount)) { $0 += amount }
                    }
                }
            }
        }
        await store.finish()
        #expect(store.pendingReceivedActions.isEmpty)
    }

    /// The same with effects, exhaustivity off: each `send` skips the actions effects sent, never another task's
    /// sent action.
    @Test func nonExhaustiveSendsFromSeveralTasksSkipOnlyReceivedActions() async {
        let reducer = Reducer<Int, Counting> { state, action in
            switch action {
            case .add(let amount):
                state += amount
                return .send(.echo(amount))
            case .echo:
                return .none
            }
        }
        let store = TestStore(initialState: 0, reducer: reducer, exhaustivity: .off)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<4 {
                group.addTask {
                    for _ in 0..<300 {
                        await store.send(.add(task + 1))
                    }
                }
            }
        }
        await store.finish()
        #expect(store.state == 300 * (1 + 2 + 3 + 4))
    }
}
