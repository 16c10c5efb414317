// A child feature's effects run in the store that reduces its actions: `ifLet` cancels them when the child is
// dismissed, and a scoped store's `cancelEffects`, `finishEffects` and `runningEffects` reach them (issue 12).
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
