import Statehouse
import StatehouseTesting
import StatehouseTestSupport
import Synchronization
import Testing

/// Random programs that present, replace and dismiss a child with timers (`ifLet`), start and cancel its effects and
/// advance a manual clock, run through a `Store` and through an exhaustive `TestStore`: the test store must apply the
/// same actions in the same order, each leaving the same state, and stop the same effects.
///
/// After each step both runs wait until every effect is asleep on the clock and every action it sent is applied, so
/// that the two runs are comparable step by step.
@Suite("TestStore matches the Store on random programs of presented children")
struct TestStorePresentationPropertyTests {
    @Test(arguments: 0..<30)
    func sameActionsAndStates(seed: UInt64) async {
        let program = presentationProgram(seed: seed)
        let recorded = await runOnStore(program)
        await runOnTestStore(program, expecting: recorded)
    }

    /// Each step's actions with the state each left, and how many timers sleep after it.
    private func runOnStore(_ program: [ProgramStep]) async -> [(applied: [Applied], sleepers: Int)] {
        let clock = ManualClock()
        let applied = Locked<[Applied]>([])
        let parent = parentReducer(clock: clock)
        let store = Store(initialState: Parent()) { (state: inout Parent, action: ParentAction) in
            let effect = parent.reduce(&state, action)
            applied.withLock { $0.append(Applied(action: action, after: state)) }
            return effect
        }
        var recorded: [(applied: [Applied], sleepers: Int)] = []
        for step in program {
            let before = applied.withLock { $0.count }
            switch step {
            case .send(let action): store.dispatch(action)
            case .advance: clock.advance(by: .seconds(1))
            }
            // Applying a queued action may start a timer: settled when nothing is queued and every timer sleeps.
            repeat {
                #expect(await eventually { store.runningEffects == clock.sleepers() })
                await store.waitForQueuedWork()
            } while store.runningEffects != clock.sleepers()
            recorded.append((applied.withLock { Array($0[before...]) }, clock.sleepers()))
        }
        #expect(store.runningEffects == 0, "the program ends by dismissing the child")
        let crossed = applied.withLock { $0.filter { ($0.after.child?.ticks ?? 0) >= 1000 }.count }
        #expect(crossed == 0, "a timer ticked a child other than its own")
        return recorded
    }

    private func runOnTestStore(
        _ program: [ProgramStep],
        expecting recorded: [(applied: [Applied], sleepers: Int)]
    ) async {
        let clock = ManualClock()
        let store = TestStore(initialState: Parent(), reducer: parentReducer(clock: clock))
        for (step, expected) in zip(program, recorded) {
            var received = expected.applied[...]
            switch step {
            case .send(let action):
                let sent = received.popFirst()
                #expect(sent?.action == action)
                await store.send(action) { $0 = sent?.after ?? $0 }
            case .advance:
                clock.advance(by: .seconds(1))
            }
            #expect(await eventually { clock.sleepers() == expected.sleepers })
            for applied in received {
                await store.receive(applied.action) { $0 = applied.after }
            }
        }
        await store.finish()
        #expect(store.state == recorded.last?.applied.last?.after)
    }
}

private struct Child: Equatable, Identifiable, Sendable {
    var id: Int
    var ticks = 0
}

private enum ChildAction: Equatable, Sendable {
    case start
    case stop
    case tick(from: Int)
}

private struct Parent: Equatable, Sendable {
    var child: Child?
    var presented = 0
    /// Every action applied, so that each leaves a state of its own.
    var log: [ParentAction] = []
}

private enum ParentAction: Equatable, Sendable {
    case open
    case close
    case replace
    case child(ChildAction)
}

private struct Applied: Sendable {
    let action: ParentAction
    let after: Parent
}

private enum ProgramStep: Sendable {
    case send(ParentAction)
    case advance
}

private struct TimerID: Hashable, Sendable {}

private func parentReducer(clock: ManualClock) -> Reducer<Parent, ParentAction> {
    let child = Reducer<Child, ChildAction> { state, action in
        switch action {
        case .start:
            let id = state.id
            return .run { send in
                while true {
                    try await clock.sleep(for: .seconds(1))
                    send(.tick(from: id))
                }
            }
            .cancellable(id: TimerID())
        case .stop:
            return .cancel(id: TimerID())
        case .tick(let from):
            // A tick of another child's timer would show here, and differ from the store's run.
            state.ticks += from == state.id ? 1 : 1000
            return .none
        }
    }
    return Reducer<Parent, ParentAction> { state, action in
        switch action {
        case .open where state.child == nil, .replace:
            state.presented += 1
            state.child = Child(id: state.presented)
        case .close:
            state.child = nil
        case .open, .child:
            break
        }
        state.log.append(action)
    }
    .ifLet(\.child, action: ActionCase(ParentAction.child), then: child)
}

/// A seeded program of 10 to 40 steps, ending with the child dismissed.
private func presentationProgram(seed: UInt64) -> [ProgramStep] {
    var random = SplitMix64(seed: seed)
    let choices: [ProgramStep] = [
        .send(.open), .send(.open), .send(.close), .send(.replace), .send(.child(.start)), .send(.child(.start)),
        .send(.child(.stop)), .advance, .advance, .advance,
    ]
    let steps = (0..<(10 + random.next(below: 31))).map { _ in choices[random.next(below: choices.count)] }
    return steps + [.send(.close)]
}
