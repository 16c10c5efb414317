import Dispatch
import Foundation
import StatehouseTesting
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// A presented child that knows which presentation it is: `id` is new at each presentation, and every tick says
/// which presentation's timer sent it, so a tick that reaches the wrong child is counted, not mistaken for its own.
private struct Sheet: Equatable, Identifiable, Sendable {
    var id: Int
    var ticks = 0
    var foreignTicks = 0
    var inner: Sheet.Inner?

    struct Inner: Equatable, Sendable { var ticks = 0 }
}

private enum SheetAction: Equatable, Sendable {
    /// Ticks every second, with the sheet's id, until cancelled; marked `TimerID`.
    case start
    case tick(from: Int)
    /// A tick after a second, debounced.
    case debounce
    /// A tick now, or kept for the end of a one-second throttle window.
    case throttle
    /// Keeps its `Send` for a callback outside the task.
    case keepSend
    case openInner
    case closeInner
    case inner(InnerAction)
}

private enum InnerAction: Equatable, Sendable { case start, tick }

private struct TimerID: Hashable, Sendable {}

/// A callback registry outside any effect's task: what a delegate or a notification observer holds.
private final class Callbacks: Sendable {
    private let sends = Locked<[Send<SheetAction>]>([])
    func keep(_ send: Send<SheetAction>) { sends.withLock { $0.append(send) } }
    func fire(_ action: SheetAction) { for send in sends.withLock({ $0 }) { send(action) } }
}

private func sheetReducer(clock: ManualClock, callbacks: Callbacks = Callbacks()) -> Reducer<Sheet, SheetAction> {
    let inner = Reducer<Sheet.Inner, InnerAction> { state, action in
        switch action {
        case .start:
            return .run { send in
                while true {
                    try await clock.sleep(for: .seconds(1))
                    send(.tick)
                }
            }
        case .tick:
            state.ticks += 1
            return .none
        }
    }
    return Reducer<Sheet, SheetAction> { state, action in
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
        case .tick(let from):
            if from == state.id { state.ticks += 1 } else { state.foreignTicks += 1 }
        case .debounce:
            return .send(.tick(from: state.id)).debounce(id: "debounce", for: .seconds(1), clock: clock)
        case .throttle:
            return .send(.tick(from: state.id)).throttle(id: "throttle", for: .seconds(1), clock: clock, latest: true)
        case .keepSend:
            return .run { send in callbacks.keep(send) }
        case .openInner:
            state.inner = Sheet.Inner()
        case .closeInner:
            state.inner = nil
        case .inner:
            break
        }
        return .none
    }
    .ifLet(\.inner, action: ActionCase(SheetAction.inner), then: inner)
}

private struct Host: Equatable, Sendable {
    var sheet: Sheet?
    var presented = 0
    /// Ticks that reached the host while no sheet was there.
    var strays = 0
    /// Ticks that reached a sheet other than the one whose effect sent them.
    var crossed = 0
}

private enum HostAction: Equatable, Sendable {
    /// Presents a new sheet if none is there.
    case open
    case close
    /// Presents a new sheet in place of the one there.
    case replace
    case sheet(SheetAction)
}

private func hostReducer(clock: ManualClock, callbacks: Callbacks = Callbacks()) -> Reducer<Host, HostAction> {
    Reducer<Host, HostAction> { state, action in
        switch action {
        case .open where state.sheet == nil, .replace:
            state.presented += 1
            state.sheet = Sheet(id: state.presented)
        case .open:
            break
        case .close:
            state.sheet = nil
        case .sheet(.tick(let from)):
            guard let sheet = state.sheet else { state.strays += 1; break }
            if sheet.id != from { state.crossed += 1 }
        case .sheet:
            break
        }
    }
    .ifLet(\.sheet, action: ActionCase(HostAction.sheet), then: sheetReducer(clock: clock, callbacks: callbacks))
}

/// Two panels of one kind side by side, each able to present a sheet: one feature scoped twice.
private struct Split: Equatable, Sendable {
    var left = Panel()
    var right = Panel()
}

private struct Panel: Equatable, Sendable {
    var sheet: Sheet?
}

private enum PanelAction: Equatable, Sendable {
    case open(id: Int)
    case close
    case sheet(SheetAction)
}

private enum SplitAction: Equatable, Sendable {
    case left(PanelAction)
    case right(PanelAction)
}

private func splitReducer(clock: ManualClock) -> Reducer<Split, SplitAction> {
    let panel = Reducer<Panel, PanelAction> { state, action in
        switch action {
        case .open(let id): state.sheet = Sheet(id: id)
        case .close: state.sheet = nil
        case .sheet: break
        }
    }
    .ifLet(\.sheet, action: ActionCase(PanelAction.sheet), then: sheetReducer(clock: clock))
    return .combine(
        .scope(state: \.left, action: ActionCase(SplitAction.left), child: panel),
        .scope(state: \.right, action: ActionCase(SplitAction.right), child: panel)
    )
}

/// One child feature, with a child of its own, presented in two places of one parent.
private struct Twins: Equatable, Sendable {
    var first: Sheet?
    var second: Sheet?
}

private enum TwinsAction: Equatable, Sendable {
    case first(SheetAction)
    case second(SheetAction)
}

private func twinsReducer(clock: ManualClock) -> Reducer<Twins, TwinsAction> {
    Reducer<Twins, TwinsAction> { _, _ in }
        .ifLet(\.first, action: ActionCase(TwinsAction.first), then: sheetReducer(clock: clock))
        .ifLet(\.second, action: ActionCase(TwinsAction.second), then: sheetReducer(clock: clock))
}

/// Rows that each present a sheet (`ifLet` inside `forEach`), in two lists of one feature with the same row ids.
private struct Row: Equatable, Identifiable, Sendable {
    var id: Int
    var sheet: Sheet?
}

private enum RowAction: Equatable, Sendable {
    case open
    case close
    case sheet(SheetAction)
}

private struct Lists: Equatable, Sendable {
    var first = [Row(id: 1), Row(id: 2)]
    var second = [Row(id: 1), Row(id: 2)]
}

private enum ListAction: Equatable, Sendable {
    case row(id: Int, action: RowAction)
}

private enum ListsAction: Equatable, Sendable {
    case first(ListAction)
    case second(ListAction)
}

private func listsReducer(clock: ManualClock) -> Reducer<Lists, ListsAction> {
    let row = Reducer<Row, RowAction> { state, action in
        switch action {
        case .open: state.sheet = Sheet(id: state.id)
        case .close: state.sheet = nil
        case .sheet: break
        }
    }
    .ifLet(\.sheet, action: ActionCase(RowAction.sheet), then: sheetReducer(clock: clock))
    let list = Reducer<[Row], ListAction> { _, _ in }
        .forEach(\.self, action: ActionCase(ListAction.row), element: row)
    return .combine(
        .scope(state: \.first, action: ActionCase(ListsAction.first), child: list),
        .scope(state: \.second, action: ActionCase(ListsAction.second), child: list)
    )
}

/// Waits for the store's effects, with a deadline: a child's timer that was not cancelled runs for ever.
private func settled<State, Action>(_ store: Store<State, Action>) async -> Bool {
    guard await eventually({ store.runningEffects == 0 }) else { return false }
    await store.finishEffects()
    return true
}

/// Waits until `count` tasks sleep on `clock`, with a deadline.
private func sleeping(_ count: Int, on clock: ManualClock) async -> Bool {
    await eventually { clock.sleepers() >= count }
}

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

/// An `ifLet` scope's effects run in the root store: cancelling, counting and waiting for them through the scope, or a
/// scope of it, reach the root's.
@Suite("ifLet scopes: their effects reach the store that runs them")
struct ScopeIfLetEffectsHostTests {
    /// The ifLet scope outlives its part: cancelling, counting and waiting still reach the root.
    @Test func anIfLetScopeWhosePartIsGoneStillReachesTheRootsEffects() async throws {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        let sheet = try #require(store.scope(ifLet: \.sheet, action: HostAction.sheet))
        sheet.dispatch(.start)
        #expect(await sleeping(1, on: clock))
        store.dispatch(.close)
        store.dispatch(.open)
        sheet.dispatch(.start)
        #expect(await eventually { sheet.runningEffects == 1 })
        sheet.cancelEffects(id: TimerID())
        #expect(await eventually { store.runningEffects == 0 }, "the cancel did not reach the root")
        #expect(await settled(sheet))
        #expect(store.state.sheet?.ticks == 0)
    }

    /// `finishEffects` on a scope of a scope while other threads dispatch to it: it returns, and a last one after
    /// the threads have stopped sees every action applied.
    @Test func finishingAScopeOfAScopeWhileThreadsDispatchReturnsAndMissesNothing() async throws {
        let clock = ManualClock()
        let store = Store(initialState: Host(), reducer: hostReducer(clock: clock))
        store.dispatch(.open)
        let sheet = try #require(store.scope(ifLet: \.sheet, action: HostAction.sheet))
        store.dispatch(.sheet(.openInner))
        let inner = try #require(sheet.scope(ifLet: \.inner, action: SheetAction.inner))
        let waiter = Task {
            for _ in 0..<50 { await inner.finishEffects() }
        }
        await onNewThreads(4) { thread in
            for round in 0..<250 {
                inner.dispatch(.tick)
                if (thread + round) % 2 == 0 { sheet.dispatch(.keepSend) }
            }
        }
        await waiter.value
        await inner.finishEffects()
        #expect(store.state.sheet?.inner?.ticks == 1000)
        #expect(inner.runningEffects == 0)
    }
}

/// An `ifLet` scope, and scopes of it, read the last non-nil part, and follow the part through `nil` and back.
@Suite("ifLet scopes keep their last part", .serialized)
struct ScopeIfLetLastPartTests {
    /// An `ifLet` scope, and scopes of it, read the last non-nil part; a scope of it follows or not.
    @Test(arguments: [false, true])
    func scopesOfAnIfLetScopeReadItsLastPart(grandFollows: Bool) async throws {
        let root = arStore()
        root.dispatch(.setOpt(ARMid()))
        let opt = try #require(root.scope(ifLet: \.opt, action: ARAction.optMid))
        let grand = opt.scope(state: \.leaf, action: ARMidAction.leaf)
        let seen = Atomic(-1)
        let token = grandFollows ? grand.subscribe(\.count) { seen.store($0, ordering: .sequentiallyConsistent) } : nil
        for i in 1...20 {
            root.dispatch(.bump)
            #expect(grand.state.count == i)
            #expect(opt.state.leaf.count == i)
        }
        root.dispatch(.setOpt(nil))
        root.dispatch(.bump)  // the parent moves on; the ifLet scope keeps its last part
        #expect(opt.state.leaf.count == 20)
        #expect(grand.state.count == 20)
        #expect(grand.state.label == "L20")
        if grandFollows { #expect(attackSpin { seen.load(ordering: .sequentiallyConsistent) == 20 }) }
        withExtendedLifetime(token) {}
    }

    /// A subscriber of a scope of an `ifLet` scope hears the part through `nil` and back, each value once; once it is
    /// gone the scope stops following, and reads the last value through the `ifLet` scope.
    @Test func aScopeOfAnIfLetScopeFollowsThePartThroughNilAndBack() {
        let parent = makeCountedParentStore()
        parent.dispatch(.setDetail(Counter(count: 1)))
        guard let detail = parent.scope(ifLet: \.detail, action: CountedParentAction.detail) else {
            Issue.record("no ifLet scope for a detail that is set")
            return
        }
        let count = detail.scope(state: \.count, action: { (value: Int) in CounterAction.set(value) })
        let values = Recorder<Int>()
        let token = count.subscribe(\.self) { values.append($0) }
        parent.dispatch(.setDetail(nil))
        parent.dispatch(.setDetail(Counter(count: 2)))
        parent.dispatch(.setDetail(nil))
        parent.dispatch(.setDetail(Counter(count: 2)))
        parent.dispatch(.detail(.increment))
        #expect(values.elements == [1, 2, 3])
        token.cancel()
        parent.dispatch(.setDetail(nil))
        #expect(count.upstream?.isFollowing == false)
        #expect(count.state == 3, "read through the ifLet scope, which keeps the last value")
    }
}
