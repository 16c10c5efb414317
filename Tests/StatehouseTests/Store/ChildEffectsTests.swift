// A child feature's effects run in the store that reduces its actions: `ifLet` cancels them when the child is
// dismissed, and a scoped store's `cancelEffects`, `finishEffects` and `runningEffects` reach them.
import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Testing

private struct Ticker: Equatable, Sendable {
    var ticks = 0
    var saved = false
}

private enum TickerAction: Equatable, Sendable {
    /// Ticks every second until cancelled.
    case start
    case tick
    /// Saves after a second; the parent dismisses the child on this very action.
    case saveAndClose
    /// Saves after a second.
    case saveLater
    case saved
}

private struct Screen: Equatable, Sendable {
    var ticker: Ticker?
    var log: [String] = []
}

private enum ScreenAction: Equatable, Sendable {
    case open
    case close
    case ticker(TickerAction)
}

private struct TickerID: Hashable, Sendable {}

private func tickerReducer(clock: ManualClock) -> Reducer<Ticker, TickerAction> {
    Reducer { state, action in
        switch action {
        case .start:
            return .run { send in
                while true {
                    try await clock.sleep(for: .seconds(1))
                    send(.tick)
                }
            }
            .cancellable(id: TickerID())
        case .tick:
            state.ticks += 1
            return .none
        case .saveAndClose, .saveLater:
            return .run { send in
                try await clock.sleep(for: .seconds(1))
                send(.saved)
            }
        case .saved:
            state.saved = true
            return .none
        }
    }
}

private func screenStore(clock: ManualClock) -> Store<Screen, ScreenAction> {
    let screen = Reducer<Screen, ScreenAction> { state, action in
        switch action {
        case .open: state.ticker = Ticker()
        case .close, .ticker(.saveAndClose): state.ticker = nil
        case .ticker: break
        }
        state.log.append("\(action)")
    }
    .ifLet(\.ticker, action: ActionCase(ScreenAction.ticker), then: tickerReducer(clock: clock))
    return Store(initialState: Screen(), reducer: screen)
}

@Suite("A child's effects")
struct ChildEffectsTests {
    @Test func dismissingAnIfLetChildCancelsItsRunningEffects() async {
        let clock = ManualClock()
        let store = screenStore(clock: clock)
        store.dispatch(.open)
        store.dispatch(.ticker(.start))
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { store.state.ticker?.ticks == 1 })
        store.dispatch(.close)
        #expect(await eventually { store.runningEffects == 0 }, "the dismissed child's timer still runs")
        #expect(clock.sleepers() == 0)
        #expect(store.state.log.count == 4)  // open, start, tick, close: nothing after the close
    }

    @Test func theEffectOfTheActionThatDismissesTheChildIsCancelledToo() async {
        let clock = ManualClock()
        let store = screenStore(clock: clock)
        store.dispatch(.open)
        store.dispatch(.ticker(.saveAndClose))
        #expect(store.state.ticker == nil)
        #expect(await eventually { store.runningEffects == 0 }, "the dismissing action's own effect still runs")
        clock.advance(by: .seconds(5))
        await store.finishEffects()
        #expect(store.state.log.count == 2, "\(store.state.log)")  // open, saveAndClose: no saved
    }

    @Test func aChildStillPresentKeepsItsEffects() async {
        let clock = ManualClock()
        let store = screenStore(clock: clock)
        store.dispatch(.open)
        store.dispatch(.ticker(.start))
        store.dispatch(.ticker(.tick))  // a child action that leaves the child in place
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        #expect(await eventually { store.state.ticker?.ticks == 2 })
        #expect(store.runningEffects == 1)
        store.cancelEffects(id: TickerID())
        #expect(await eventually { store.runningEffects == 0 })
    }

    @Test func aScopedStoreCancelsCountsAndWaitsForTheEffectsOfItsActions() async throws {
        let clock = ManualClock()
        let store = screenStore(clock: clock)
        store.dispatch(.open)
        let ticker = try #require(store.scope(ifLet: \.ticker, action: ScreenAction.ticker))
        let ofTicker = ticker.scope(state: \.ticks, action: { $0 })
        ticker.dispatch(.start)
        await clock.waitForSleepers(1)
        #expect(ticker.runningEffects == 1)
        #expect(ofTicker.runningEffects == 1)
        ofTicker.cancelEffects(id: TickerID())
        #expect(await eventually { store.runningEffects == 0 }, "a scope of a scope did not reach the root's effects")

        ticker.dispatch(.saveLater)
        await clock.waitForSleepers(1)
        let finished = Task { await ticker.finishEffects() }
        clock.advance(by: .seconds(1))
        await finished.value
        #expect(store.state.ticker?.saved == true, "finishEffects on the scope returned while the root's effect ran")
    }
}

/// The effects of a `forEach` element run under ids of that element: one element's `cancelInFlight` spares the
/// others', and the parent cancels one element's effect by its element id.
@Suite("A collection element's effects", .serialized)
struct ElementEffectsTests {
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
    /// ids to the element): starting row 2's timer must not cancel row 1's, whose tick would then be dropped.
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

    /// The parent reaches one element's effect with `ElementEffectID(element:id:)`; the bare id reaches none.
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
}
