import Dispatch
import Foundation
import StatehouseTesting
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

// Features presented with `ifLet`: sheets, hosts, panels, twins and lists of rows, whose children run timers,
// callbacks, debounces and throttles, so that a test can tell whose effects are still running.

/// A presented child that knows which presentation it is: `id` is new at each presentation, and every tick says
/// which presentation's timer sent it, so a tick that reaches the wrong child is counted, not mistaken for its own.
struct Sheet: Equatable, Identifiable, Sendable {
    var id: Int
    var ticks = 0
    var foreignTicks = 0
    var inner: Sheet.Inner?

    struct Inner: Equatable, Sendable { var ticks = 0 }
}

enum SheetAction: Equatable, Sendable {
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

enum InnerAction: Equatable, Sendable { case start, tick }

struct TimerID: Hashable, Sendable {}

/// A callback registry outside any effect's task: what a delegate or a notification observer holds.
final class Callbacks: Sendable {
    private let sends = Locked<[Send<SheetAction>]>([])
    func keep(_ send: Send<SheetAction>) { sends.withLock { $0.append(send) } }
    func fire(_ action: SheetAction) { for send in sends.withLock({ $0 }) { send(action) } }
}

func sheetReducer(clock: ManualClock, callbacks: Callbacks = Callbacks()) -> Reducer<Sheet, SheetAction> {
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

struct Host: Equatable, Sendable {
    var sheet: Sheet?
    var presented = 0
    /// Ticks that reached the host while no sheet was there.
    var strays = 0
    /// Ticks that reached a sheet other than the one whose effect sent them.
    var crossed = 0
}

enum HostAction: Equatable, Sendable {
    /// Presents a new sheet if none is there.
    case open
    case close
    /// Presents a new sheet in place of the one there.
    case replace
    case sheet(SheetAction)
}

func hostReducer(clock: ManualClock, callbacks: Callbacks = Callbacks()) -> Reducer<Host, HostAction> {
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
struct Split: Equatable, Sendable {
    var left = Panel()
    var right = Panel()
}

struct Panel: Equatable, Sendable {
    var sheet: Sheet?
}

enum PanelAction: Equatable, Sendable {
    case open(id: Int)
    case close
    case sheet(SheetAction)
}

enum SplitAction: Equatable, Sendable {
    case left(PanelAction)
    case right(PanelAction)
}

func splitReducer(clock: ManualClock) -> Reducer<Split, SplitAction> {
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
struct Twins: Equatable, Sendable {
    var first: Sheet?
    var second: Sheet?
}

enum TwinsAction: Equatable, Sendable {
    case first(SheetAction)
    case second(SheetAction)
}

func twinsReducer(clock: ManualClock) -> Reducer<Twins, TwinsAction> {
    Reducer<Twins, TwinsAction> { _, _ in }
        .ifLet(\.first, action: ActionCase(TwinsAction.first), then: sheetReducer(clock: clock))
        .ifLet(\.second, action: ActionCase(TwinsAction.second), then: sheetReducer(clock: clock))
}

/// Rows that each present a sheet (`ifLet` inside `forEach`), in two lists of one feature with the same row ids.
struct IfLetRow: Equatable, Identifiable, Sendable {
    var id: Int
    var sheet: Sheet?
}

enum IfLetRowAction: Equatable, Sendable {
    case open
    case close
    case sheet(SheetAction)
}

struct Lists: Equatable, Sendable {
    var first = [IfLetRow(id: 1), IfLetRow(id: 2)]
    var second = [IfLetRow(id: 1), IfLetRow(id: 2)]
}

enum IfLetListAction: Equatable, Sendable {
    case row(id: Int, action: IfLetRowAction)
}

enum ListsAction: Equatable, Sendable {
    case first(IfLetListAction)
    case second(IfLetListAction)
}

func listsReducer(clock: ManualClock) -> Reducer<Lists, ListsAction> {
    let row = Reducer<IfLetRow, IfLetRowAction> { state, action in
        switch action {
        case .open: state.sheet = Sheet(id: state.id)
        case .close: state.sheet = nil
        case .sheet: break
        }
    }
    .ifLet(\.sheet, action: ActionCase(IfLetRowAction.sheet), then: sheetReducer(clock: clock))
    let list = Reducer<[IfLetRow], IfLetListAction> { _, _ in }
        .forEach(\.self, action: ActionCase(IfLetListAction.row), element: row)
    return .combine(
        .scope(state: \.first, action: ActionCase(ListsAction.first), child: list),
        .scope(state: \.second, action: ActionCase(ListsAction.second), child: list)
    )
}

/// Waits for the store's effects, with a deadline: a child's timer that was not cancelled runs for ever.
func settled<State, Action>(_ store: Store<State, Action>) async -> Bool {
    guard await eventually({ store.runningEffects == 0 }) else { return false }
    await store.finishEffects()
    return true
}

/// Waits until `count` tasks sleep on `clock`, with a deadline.
func sleeping(_ count: Int, on clock: ManualClock) async -> Bool {
    await eventually { clock.sleepers() >= count }
}
