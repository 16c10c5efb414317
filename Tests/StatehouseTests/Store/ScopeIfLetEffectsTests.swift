import Dispatch
import Foundation
import StatehouseTesting
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// `ifLet` cancels the effects of a child that is dismissed or replaced (timers, callbacks, debounces, throttles), at
/// every level, and only that child's: the same feature presented elsewhere (another panel, another `ifLet`, another
/// row, another list) keeps running, and a new child's effects are never reached by the old one's.
@Suite("ifLet cancels a dismissed child's effects, and only those")
struct ScopeIfLetEffectsTests {
    /// The parent presents a new sheet in place of the old one on one action: the old sheet's timer is that of a
    /// child that is gone, and must not tick the new one (nor keep running).
    @Test func aChildReplacedByAnotherOnOneActionDoesNotTickTheNewOne() async {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        store.dispatch(.sheet(.start))
        #expect(await sleeping(1, on: clock))
        store.dispatch(.replace)
        #expect(await eventually { store.runningEffects == 0 }, "the replaced child's timer still runs")
        clock.advance(by: .seconds(1))
        #expect(await settled(store))
        #expect(store.state.sheet == Sheet(id: 2), "the replaced child's timer ticked the new child")
    }

    /// The same feature scoped twice: dismissing the left panel's sheet cancels the left sheet's effects, not the
    /// right one's.
    @Test func dismissingOnePanelsChildLeavesTheOtherPanelsChildRunning() async {
        let clock = ManualClock()
        let store = Store(initialState: Split(), reducer: splitReducer(clock: clock))
        store.dispatch(.left(.open(id: 1)))
        store.dispatch(.right(.open(id: 2)))
        store.dispatch(.left(.sheet(.start)))
        store.dispatch(.right(.sheet(.start)))
        #expect(await sleeping(2, on: clock))
        store.dispatch(.left(.close))
        #expect(await eventually { store.runningEffects <= 1 })
        clock.advance(by: .seconds(1))
        #expect(await eventually { store.state.right.sheet?.ticks == 1 || store.runningEffects == 0 })
        #expect(store.state.right.sheet?.ticks == 1, "closing the left sheet cancelled the right sheet's timer")
        store.dispatch(.right(.close))
        #expect(await settled(store))
    }

    /// Two `ifLet`s of one child feature: dismissing the first one's grandchild leaves the second one's running.
    @Test func dismissingAGrandchildInOnePlaceLeavesTheSameGrandchildElsewhereRunning() async {
        let clock = ManualClock()
        let twins = Twins(first: Sheet(id: 1), second: Sheet(id: 2))
        let store = Store(initialState: twins, reducer: twinsReducer(clock: clock))
        for action in [TwinsAction.first, TwinsAction.second] {
            store.dispatch(action(.openInner))
            store.dispatch(action(.inner(.start)))
        }
        #expect(await sleeping(2, on: clock))
        store.dispatch(.first(.closeInner))
        #expect(await eventually { store.runningEffects <= 1 })
        clock.advance(by: .seconds(1))
        #expect(await eventually { store.state.second?.inner?.ticks == 1 || store.runningEffects == 0 })
        #expect(store.state.second?.inner?.ticks == 1, "closing the first grandchild cancelled the second's timer")
        store.dispatch(.second(.closeInner))
        #expect(await settled(store))
    }

    /// `ifLet` inside `forEach`, in two lists: dismissing the sheet of row 1 of the first list leaves the sheets of
    /// its other row and of row 1 of the second list running.
    @Test func dismissingOneRowsChildLeavesEveryOtherRowsChildRunning() async {
        let clock = ManualClock()
        let store = Store(initialState: Lists(), reducer: listsReducer(clock: clock))
        for list in [ListsAction.first, ListsAction.second] {
            for id in [1, 2] {
                store.dispatch(list(.row(id: id, action: .open)))
                store.dispatch(list(.row(id: id, action: .sheet(.start))))
            }
        }
        #expect(await sleeping(4, on: clock))
        store.dispatch(.first(.row(id: 1, action: .close)))
        #expect(await eventually { store.runningEffects <= 3 })
        clock.advance(by: .seconds(1))
        let ticking: @Sendable () -> [Int?] = {
            let lists = store.state
            return [lists.first[1].sheet?.ticks, lists.second[0].sheet?.ticks, lists.second[1].sheet?.ticks]
        }
        #expect(await eventually { ticking() == [1, 1, 1] || store.runningEffects < 3 })
        #expect(ticking() == [1, 1, 1], "dismissing one row's sheet cancelled another row's timer")
        #expect(store.state.first[0].sheet == nil)
        store.dispatch(.first(.row(id: 2, action: .close)))
        store.dispatch(.second(.row(id: 1, action: .close)))
        store.dispatch(.second(.row(id: 2, action: .close)))
        #expect(await settled(store))
    }

    /// Dismissed on one action, presented again on the next: the new child's fresh timer survives, and the old
    /// one's does not reach it.
    @Test func aChildPresentedAgainRightAfterItsDismissalKeepsItsFreshEffects() async {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        store.dispatch(.sheet(.start))
        #expect(await sleeping(1, on: clock))
        store.dispatch(.close)
        store.dispatch(.open)
        store.dispatch(.sheet(.start))
        #expect(await eventually { store.runningEffects == 1 })
        #expect(await sleeping(1, on: clock))
        clock.advance(by: .seconds(1))
        #expect(await eventually { store.state.sheet?.ticks == 1 })
        #expect(store.state.sheet?.foreignTicks == 0)
        store.dispatch(.close)
        #expect(await settled(store))
        #expect(store.state.strays == 0)
    }

    /// A `Send` the old child kept for a callback fires after the child was dismissed and another presented.
    @Test func aDismissedChildsCallbackDoesNotReachTheNextChild() async {
        let clock = ManualClock()
        let callbacks = Callbacks()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock, callbacks: callbacks))
        store.dispatch(.open)
        store.dispatch(.sheet(.keepSend))
        #expect(await settled(store))
        store.dispatch(.close)
        store.dispatch(.open)
        callbacks.fire(.tick(from: 2))
        #expect(await settled(store))
        #expect(store.state.sheet == Sheet(id: 2), "the dismissed child's callback reached the new child")
        #expect(store.state.strays == 0)
    }

    /// A debounced child effect pending when the child is dismissed never runs.
    @Test func aDebounceOfADismissedChildNeverFires() async {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        store.dispatch(.sheet(.debounce))
        #expect(await sleeping(1, on: clock))
        store.dispatch(.close)
        store.dispatch(.open)
        clock.advance(by: .seconds(1))
        #expect(await settled(store))
        #expect(store.state.sheet == Sheet(id: 2))
        #expect(store.state.strays == 0)
    }

    /// A throttled child effect kept for the end of its window when the child is dismissed never runs, and the
    /// window ends with the child: the next child's first throttled effect runs at once.
    @Test func aThrottleOfADismissedChildDropsWhatItKept() async {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        store.dispatch(.sheet(.throttle))
        store.dispatch(.sheet(.throttle))
        #expect(await sleeping(1, on: clock))
        store.dispatch(.close)
        store.dispatch(.open)
        store.dispatch(.sheet(.throttle))
        #expect(store.state.sheet?.ticks == 1, "the dismissed child's throttle window held the new child's effect")
        clock.advance(by: .seconds(1))
        #expect(await settled(store))
        #expect(store.state.sheet?.ticks == 1)
        #expect(store.state.sheet?.foreignTicks == 0, "the dismissed child's kept effect ran")
        #expect(store.state.strays == 0)
    }

    /// A child with a child of its own: dismissing the grandchild leaves the child's timer; dismissing the child
    /// stops both.
    @Test func nestedIfLetsCancelEachLevelsOwnEffects() async {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        store.dispatch(.sheet(.start))
        store.dispatch(.sheet(.openInner))
        store.dispatch(.sheet(.inner(.start)))
        #expect(await sleeping(2, on: clock))
        store.dispatch(.sheet(.closeInner))
        #expect(await eventually { store.runningEffects == 1 })
        clock.advance(by: .seconds(1))
        #expect(await eventually { store.state.sheet?.ticks == 1 })
        store.dispatch(.sheet(.openInner))
        store.dispatch(.sheet(.inner(.start)))
        #expect(await sleeping(2, on: clock))
        store.dispatch(.close)
        #expect(await eventually { store.runningEffects == 0 }, "dismissing the child left its child's timer")
    }

    /// Many threads present, start, and dismiss at once: a tick only ever reaches the presentation whose timer
    /// sent it, and once the last child is dismissed nothing runs.
    @Test func manyThreadsPresentingAndDismissingNeverCrossTicks() async {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        await onNewThreads(4) { thread in
            for round in 0..<300 {
                switch (thread + round) % 5 {
                case 0: store.dispatch(.open)
                case 1: store.dispatch(.sheet(.start))
                case 2: store.dispatch(thread == 0 ? .replace : .sheet(.debounce))
                case 3: clock.advance(by: .seconds(1))
                default: store.dispatch(.close)
                }
            }
        }
        // A background thread may still be applying the threads' actions, with `.close` queued behind them.
        store.dispatch(.close)
        #expect(
            await eventually { store.state.sheet == nil && store.runningEffects == 0 },
            "\(store.runningEffects) effects of dismissed children; sheet \(String(describing: store.state.sheet))"
        )
        #expect(store.state.strays == 0, "a dismissed child's ticks reached the parent")
        #expect(store.state.crossed == 0, "a child's tick reached another child")
    }

    /// The same reducer in a `TestStore`: the dismissed child's effect is cancelled there too, and the next child's
    /// arrives.
    @Test func aTestStoreCancelsADismissedChildsEffectsAsTheStoreDoes() async {
        let clock = ManualClock()
        let store = TestStore(initialState: Host(), reducer: hostReducer(clock: clock))
        await store.send(.open) { $0.presented = 1; $0.sheet = Sheet(id: 1) }
        await store.send(.sheet(.start))
        #expect(await sleeping(1, on: clock))
        await store.send(.close) { $0.sheet = nil }
        await store.send(.open) { $0.presented = 2; $0.sheet = Sheet(id: 2) }
        await store.send(.sheet(.start))
        #expect(await sleeping(1, on: clock))
        clock.advance(by: .seconds(1))
        await store.receive(.sheet(.tick(from: 2))) { $0.sheet?.ticks = 1 }
        await store.send(.replace) { $0.presented = 3; $0.sheet = Sheet(id: 3) }
        clock.advance(by: .seconds(1))
        await store.finish()
    }
}
