import Foundation
import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// The test store does what the store it stands for does: the order effects' actions arrive in, the state an
/// assertion sees, what a non-exhaustive step skips, and how actions are written in failures.
@Suite("TestStore behaves like the Store")
struct TestStoreParityTests {
    enum Letter: Equatable, Sendable { case a, b1, b2, b3, c1 }

    /// `a` sends b1 at once and c1 from a task; b1 sends b2 and b3. The store applies b1, b2, b3 before `dispatch(a)`
    /// returns; so does the test store: holding b1 unapplied would let c1, sent meanwhile, come before b2.
    @Test func effectActionsArriveInTheStoresOrder() async {
        let gate = Gate()
        let c1Sent = Gate()
        let store = TestStore(initialState: [Letter]()) { (state: inout [Letter], action: Letter) -> Effect<Letter> in
            state.append(action)
            switch action {
            case .a:
                return .merge(.send(.b1), .run { send in
                    await gate.wait()
                    send(.c1)
                    c1Sent.open()
                })
            case .b1: return .merge(.send(.b2), .send(.b3))
            case .b2, .b3, .c1: return .none
            }
        }
        await store.send(.a) { $0 = [.a] }
        gate.open()
        await c1Sent.wait()
        await store.receive(.b1) { $0.append(.b1) }
        await store.receive(.b2) { $0.append(.b2) }
        await store.receive(.b3) { $0.append(.b3) }
        await store.receive(.c1) { $0.append(.c1) }
        await store.finish()
    }

    enum Tap: Equatable, Sendable { case tap, response(Int) }

    static let tapReducer = Reducer<Int, Tap> { state, action in
        switch action {
        case .tap:
            state += 1
            return .run { send in send(.response(42)) }
        case .response(let number):
            state = number
            return .none
        }
    }

    /// TCA's `testSendWithUnreceivedActions_SkipsActions`: the response was applied before the second tap, as in
    /// the store (44 would mean both responses first; 2 was the old test store's answer).
    @Test func nonExhaustiveSendAppliesWhatEffectsSentFirst() async {
        let store = TestStore(initialState: 0, reducer: Self.tapReducer, exhaustivity: .off)
        await store.send(.tap)
        #expect(store.state == 1)
        #expect(await eventually { store.pendingReceivedActions == [.response(42)] })
        await store.send(.tap)
        #expect(store.state == 43)
        await store.finish()
    }

    /// A non-exhaustive `receive` that matches nothing leaves the received actions for the next one.
    @Test func unmatchedNonExhaustiveReceiveConsumesNothing() async {
        let store = TestStore(initialState: 0, reducer: Self.tapReducer, exhaustivity: .off)
        await store.send(.tap)
        await withKnownIssue {
            await store.receive(.response(7), timeout: .milliseconds(50))
        } matching: { issue in
            Self.text(issue).contains("no effect sent a matching action")
        }
        await store.receive(.response(42)) { $0 = 42 }
        #expect(store.state == 42)
        await store.finish()
    }

    @Test func anAssertionThatChangesNothingFailsWhenTheStateDidNotChange() async {
        let store = TestStore(initialState: 0) { (state: inout Int, action: Int) in state += action }
        await withKnownIssue {
            await store.send(0) { _ in }
        } matching: { issue in
            Self.text(issue).contains("Expected the state to change after 0, but no change occurred")
        }
        await withKnownIssue {
            await store.send(0) { $0 = 0 }
        }
        await store.send(0)
        await store.finish()
    }

    /// TCA's `testStateAccess`: inside an assertion closure the store's state is the state before the action.
    @Test func stateInsideTheAssertionIsTheStateBefore() async {
        let store = TestStore(initialState: 0) { (state: inout Int, action: Letter) -> Effect<Letter> in
            state += 1
            return action == .a ? .merge(.send(.b1), .send(.b2), .send(.b3)) : .none
        }
        await store.send(.a) {
            #expect(store.state == 0)
            $0 = 1
        }
        #expect(store.state == 1)
        await store.receive(.b1) {
            #expect(store.state == 1)
            $0 = 2
        }
        #expect(store.state == 2)
        await store.receive(.b2) { $0 = 3 }
        await store.receive(.b3) { $0 = 4 }
        #expect(store.state == 4)
        await store.finish()
    }

    /// TCA's `testStateAccess`, non-exhaustive: inside `send`'s assertion closure, `store.state` is the state before
    /// the action. With exhaustivity off, `send` first skips `.response(42)`, which the store applied before the
    /// second tap: the state before the tap is 42, not 1, the state after the last *asserted* step, which no real
    /// store ever had just before this action.
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

    /// A test store that goes away with received actions nobody asserted fails the test, also when `finish()` was
    /// called earlier in the test: the actions received after it must not pass silently.
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

    @Test func aStoreGoingAwayWithUnassertedActionsFailsWhereItWasMade() async {
        await withKnownIssue {
            let store = TestStore(initialState: 0, reducer: Self.tapReducer)
            await store.send(.tap) { $0 = 1 }
            #expect(await eventually { store.pendingReceivedActions.count == 1 })
        } matching: { issue in
            Self.text(issue).contains("went away with 1 received action(s) not asserted: TestStoreParityTests.Tap.response(42)")
                && issue.sourceLocation?.fileID == #fileID
        }
    }

    @Test func aStoreGoingAwayWithRunningEffectsFails() async {
        let gate = Gate()
        await withKnownIssue {
            let store = TestStore(initialState: 0) { (state: inout Int, action: Int) -> Effect<Int> in
                .run { _ in await gate.wait() }
            }
            await store.send(1)
        } matching: { issue in
            Self.text(issue).contains("with 1 effect(s) still running")
        }
        gate.open()
    }

    @Test func finishInNonExhaustiveModeCancelsRunningEffectsSilently() async {
        let reducer = Reducer<Int, Int> { state, action in
            state = action
            return .run { send in
                try? await Task.sleep(for: .seconds(3600))
                if !Task.isCancelled { send(-1) }
            }
        }
        let store = TestStore(initialState: 0, reducer: reducer, exhaustivity: .off)
        await store.send(1)
        await store.finish(timeout: .milliseconds(20))
        #expect(store.state == 1)
    }

    @Test func skipInFlightEffectsAndSkipReceivedActionsEndAnExhaustiveTest() async {
        let gate = Gate()
        let store = TestStore(initialState: 0) { (state: inout Int, action: Int) -> Effect<Int> in
            state += action
            guard action == 1 else { return .none }
            return .merge(.send(10), .send(100), .run { send in
                await gate.wait()
                send(1000)
            })
        }
        await store.send(1) { $0 = 1 }
        await store.skipReceivedActions()
        #expect(store.state == 111)
        #expect(store.pendingReceivedActions.isEmpty)
        await store.skipInFlightEffects()
        gate.open()
        await store.finish()
        #expect(store.state == 111)
    }

    /// `receive` wakes when the action arrives: the effect sends only after `receive` started waiting.
    @Test func receiveWaitsForAnActionSentLater() async {
        let gate = Gate()
        let store = TestStore(initialState: 0) { (state: inout Int, action: Int) -> Effect<Int> in
            state = action
            return action == 1 ? .run { send in
                await gate.wait()
                send(2)
            } : .none
        }
        await store.send(1) { $0 = 1 }
        async let opened: Void = { gate.open() }()
        await store.receive(2, timeout: .seconds(120)) { $0 = 2 }
        await opened
        await store.finish()
    }

    static func text(_ issue: Issue) -> String {
        issue.comments.map(\.rawValue).joined()
    }
}

@Suite("IncrementingUUIDs")
struct IncrementingUUIDsTests {
    @Test func countsFromZeroAcrossThreads() async {
        let uuids = IncrementingUUIDs()
        #expect(uuids.next().uuidString == "00000000-0000-0000-0000-000000000000")
        #expect(uuids.next() == UUID(1))
        let made = await withTaskGroup(of: [UUID].self) { group in
            for _ in 0..<8 { group.addTask { (0..<100).map { _ in uuids.next() } } }
            return await group.reduce(into: Set<UUID>()) { $0.formUnion($1) }
        }
        #expect(made.count == 800)
        #expect(uuids.next() == UUID(802))
        #expect(UUID(0x1_0000_0001).uuidString == "00000000-0000-0000-0000-000100000001")
    }
}
