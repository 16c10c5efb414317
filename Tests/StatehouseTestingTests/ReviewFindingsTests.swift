import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// Tests from the adversarial review of issue 12's TestStore (each failed before its fix).
@Suite("Review findings: TestStore")
struct TestStoreReviewFindingsTests {
    typealias Tap = TestStoreParityTests.Tap

    static let tapReducer = TestStoreParityTests.tapReducer

    /// Issue 12 (TCA's `testStateAccess`): inside `send`'s assertion closure, `store.state` is the state before the
    /// action. With exhaustivity off, `send` first skips `.response(42)`, which the store applied before the second
    /// tap: the state before the tap is 42. The closure sees 1, the state after the last *asserted* step, which no
    /// real store ever had just before this action.
    @Test func nonExhaustiveSendShowsTheStateBeforeTheActionInsideTheAssertion() async {
        let store = TestStore(initialState: 0, reducer: Self.tapReducer, exhaustivity: .off)
        await store.send(.tap)
        #expect(await eventually { store.pendingReceivedActions == [.response(42)] })
        await store.send(.tap) {
            #expect(store.state == 42, "state inside the assertion of the second tap")
            $0 = 43
        }
        #expect(store.state == 43)
        await store.finish()
    }

    enum Step: Equatable, Sendable {
        case go, a, b
    }

    /// The same for a non-exhaustive `receive` that skips a received action: the state before `.b` is the state
    /// after `.a` (2), not the state after the last asserted `send` (1).
    @Test func nonExhaustiveReceiveShowsTheStateBeforeTheActionInsideTheAssertion() async {
        let reducer = Reducer<Int, Step> { state, action in
            state += 1
            return action == .go ? .merge(.send(.a), .send(.b)) : .none
        }
        let store = TestStore(initialState: 0, reducer: reducer, exhaustivity: .off)
        await store.send(.go)
        await store.receive(.b) {
            #expect(store.state == 2, "state inside the assertion of .b")
            $0 = 3
        }
        await store.finish()
    }

    /// A test store that goes away with received actions nobody asserted must fail the test (issue 12). Calling
    /// `finish()` earlier in the test switches the check off for good: the actions received after it pass silently.
    @Test func aStoreGoingAwayWithActionsReceivedAfterAnEarlierFinishFails() async {
        await withKnownIssue {
            let store = TestStore(initialState: 0, reducer: Self.tapReducer)
            await store.finish()
            await store.send(.tap) { $0 = 1 }
            #expect(await eventually { store.pendingReceivedActions.count == 1 })
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("went away")
        }
    }

    enum Spoken: Equatable, Sendable, CustomStringConvertible {
        case go

        var description: String { "the go button" }
    }

    /// Issue 12: actions are printed "as a person writes them" (`.b2`). A payload-less case of an enum with its own
    /// `description` is printed as `.` + that description: `.the go button`.
    @Test func aCaseOfAnEnumWithADescriptionIsWrittenAsCode() async {
        let store = TestStore(initialState: 0) { (state: inout Int, _: Spoken) in state += 1 }
        await withKnownIssue {
            await store.send(.go) { $0 = 2 }
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("The state after .go is not")
        }
        await store.finish()
    }
}
