import Dispatch
import Statehouse
import StatehouseTestSupport
import Testing

/// Tests from the adversarial review of issue 12's store work (reducers, effects, finishEffects); each failed before its fix.
@Suite("Review findings: reducers and effects", .serialized)
struct ReviewFindingsTests {
    enum Child: Equatable, Sendable {
        case tap
    }

    enum Parent: Equatable, Sendable {
        case child(action: Child)
        case load(id: Int)
        case load(name: Int)
        case other
    }

    // MARK: ActionCase by reflection

    /// A case with one labelled payload, `case child(action: ChildAction)`, is as common a spelling as
    /// `case child(ChildAction)`. `Mirror` shows its payload as a one-element labelled tuple `(action: .tap)`, which
    /// does not cast to `Child`: the reflected `extract` never finds the case.
    @Test func actionCaseFindsALabelledSinglePayload() {
        let child = ActionCase(Parent.child(action:))
        #expect(child.extract(.child(action: .tap)) == .tap)
        #expect(child.extract(.other) == nil)
    }

    /// So a scoped child reducer on such a case silently never runs.
    @Test func scopeOnALabelledCaseRunsTheChild() {
        let counter = Reducer<Int, Child> { count, _ in count += 1 }
        let app = Reducer<Int, Parent>.scope(state: \.self, action: ActionCase(Parent.child(action:)), child: counter)
        let store = Store(initialState: 0, reducer: app)
        store.dispatch(.child(action: .tap))
        #expect(store.state == 1)
    }

    /// Two cases may share a base name (`load(id:)`, `load(name:)`) and a payload type: `Mirror` labels both
    /// `load`, so the name check cannot tell them apart. The case given must be found, the other not.
    @Test func actionCaseTellsCasesThatShareABaseName() {
        let byID = ActionCase(Parent.load(id:))
        #expect(byID.extract(.load(id: 5)) == 5)
        #expect(byID.extract(.load(name: 5)) == nil)
    }

    // MARK: forEach and cancellation ids

    struct Row: Equatable, Identifiable, Sendable {
        let id: Int
        var ticks = 0
    }

    enum RowAction: Equatable, Sendable {
        case start
        case tick
    }

    enum ListAction: Equatable, Sendable {
        case row(id: Int, action: RowAction)
    }

    /// Rows whose `.start` runs a timer marked "row-timer" that ticks once the gate opens.
    static func rows(gate: Gate, cancelInFlight: Bool) -> Reducer<[Row], ListAction> {
        let row = Reducer<Row, RowAction> { state, action in
            switch action {
            case .start:
                return .run { send in
                    await gate.wait()
                    send(.tick)
                }
                .cancellable(id: "row-timer", cancelInFlight: cancelInFlight)
            case .tick:
                state.ticks += 1
                return .none
            }
        }
        return Reducer<[Row], ListAction> { _, _ in .none }
            .forEach(\.self, action: ActionCase(ListAction.row), element: row)
    }

    /// Each row runs its own timer, restarted with `cancelInFlight` ("only this row's latest start matters"). The
    /// rows of an identified collection are independent features (TCA scopes a `forEach` element's cancellation
    /// ids to the element): starting row 2's timer must not cancel row 1's. (When the ids were shared by every row,
    /// row 1's effect was cancelled and its tick dropped.)
    @Test func forEachKeepsEachElementsCancellationIDsApart() async {
        let gate = Gate()
        let list = Self.rows(gate: gate, cancelInFlight: true)
        let store = Store(initialState: [Row(id: 1), Row(id: 2)], reducer: list)
        store.dispatch(.row(id: 1, action: .start))
        store.dispatch(.row(id: 2, action: .start))
        gate.open()
        await store.finishEffects()
        // An uncancelled effect's tick is applied on its own task (the store is idle) before the task ends.
        #expect(await eventually { store.state.allSatisfy { $0.ticks == 1 } })
        #expect(store.state == [Row(id: 1, ticks: 1), Row(id: 2, ticks: 1)])
    }

    @Test func theParentCancelsOneElementsEffectWithItsElementEffectID() async {
        let gate = Gate()
        let list = Self.rows(gate: gate, cancelInFlight: false)
        let store = Store(initialState: [Row(id: 1), Row(id: 2)], reducer: list)
        store.dispatch(.row(id: 1, action: .start))
        store.dispatch(.row(id: 2, action: .start))
        store.cancelEffects(id: "row-timer")   // no element's effect has this id
        store.cancelEffects(id: ElementEffectID(element: 1, id: "row-timer"))
        gate.open()
        await store.finishEffects()
        #expect(store.state == [Row(id: 1, ticks: 0), Row(id: 2, ticks: 1)])
    }

    // MARK: finishEffects

    enum Chain: Equatable, Sendable {
        case start, hold, next, done
    }

    /// `finishEffects()` says it waits "including those started by actions that effects sent meanwhile". An effect
    /// sends `.next` while another thread is applying an action, so `.next` is queued; the effect's task then ends.
    /// `.next` starts another effect once applied. `finishEffects()` returns at once (no task is running) although
    /// an action an effect sent is still queued and will start more work: a test awaiting it then reads a store
    /// whose effects have not finished.
    @Test func finishEffectsWaitsForTheEffectsOfActionsEffectsQueued() async {
        let release = DispatchSemaphore(value: 0)
        let holding = Gate()
        let effectGate = Gate()
        let applied = Recorder<Chain>()
        let store = Store(initialState: 0) { (_: inout Int, action: Chain) -> Effect<Chain> in
            applied.append(action)
            switch action {
            case .start:
                return .run { send in
                    await effectGate.wait()
                    send(.next)
                }
            case .hold:
                holding.open()
                // Bounded: a fixed library would make finishEffects wait for this, and the test releases it below.
                _ = release.wait(timeout: .now() + .seconds(10))
                return .none
            case .next:
                return .run { send in send(.done) }
            case .done:
                return .none
            }
        }
        store.dispatch(.start)
        DispatchQueue.global().async { store.dispatch(.hold) }
        await holding.wait()
        effectGate.open()
        // The first effect sent `.next` (queued behind `.hold`) and ended.
        #expect(await eventually { store.runningEffects == 0 })

        let appliedWhenFinished = Locked<[Chain]?>(nil)
        let finishing = Task {
            await store.finishEffects()
            appliedWhenFinished.withLock { $0 = applied.elements }
        }
        _ = await eventually(timeout: .seconds(2)) { appliedWhenFinished.withLock { $0 } != nil }
        release.signal()
        await finishing.value
        let seen = appliedWhenFinished.withLock { $0 } ?? []
        #expect(seen.contains(.done), "finishEffects returned having applied only \(seen)")
    }
}
