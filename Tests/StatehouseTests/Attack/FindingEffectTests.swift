// Findings of the adversarial review of issue 10's fix, kept as regression tests.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

private struct RTally: Equatable, Sendable { var ticks = 0; var stops = 0 }
private enum RAction: Equatable, Sendable { case start, startNested, stop, stopOuter, tick }

private final class SendBox: Sendable {
    let send = Locked<Send<RAction>?>(nil)
    func keep(_ s: Send<RAction>) { send.withLock { $0 = s } }
    func fire(_ a: RAction) { send.withLock { $0 }?(a) }
}

@Suite(.serialized) struct FindingEffectTests {
    /// The effect registers a callback and its task ends at once; the callback sends later.
    @Test func cancelAfterTheTaskEndedStillDropsCallbackSends() async {
        let box = SendBox()
        let store = Store(initialState: RTally()) { (state: inout RTally, action: RAction) -> Effect<RAction> in
            switch action {
            case .start: return .run { send in box.keep(send) }.cancellable(id: "timer")
            case .stop: state.stops += 1; return .cancel(id: "timer")
            case .tick: state.ticks += 1
            default: break
            }
            return .none
        }
        store.dispatch(.start)
        await store.finishEffects()
        store.dispatch(.stop)
        box.fire(.tick)
        #expect(store.state.ticks == 0, "a cancelled effect's callback action was applied")
    }

    /// A nested cancellable whose send escapes ends its parent's count twice: the parent's handle is dropped while
    /// its task still runs, and cancelling the parent no longer drops that task's actions.
    @Test(arguments: [false, true]) func anEscapedNestedSendUnbalancesTheParentsCount(escape: Bool) async throws {
        let box = SendBox()
        let store = Store(initialState: RTally()) { (state: inout RTally, action: RAction) -> Effect<RAction> in
            switch action {
            case .startNested:
                return Effect.merge(
                    Effect.run { send in box.keep(send) }.cancellable(id: "inner"),
                    Effect.run { send in
                        try? await Task.sleep(for: .seconds(3600))   // cancelled: returns early, then sends
                        send(.tick)
                    }
                ).cancellable(id: "outer")
            case .stopOuter: state.stops += 1; return .cancel(id: "outer")
            case .tick: state.ticks += 1
            default: break
            }
            return .none
        }
        store.dispatch(.startNested)
        #expect(await eventually { store.runningEffects == 1 })   // the inner task has ended, the outer one sleeps
        if escape { box.fire(.tick) }                     // legitimate: inner not cancelled → ticks 1
        let expected = escape ? 1 : 0
        #expect(store.state.ticks == expected)
        store.dispatch(.stopOuter)
        await store.finishEffects()
        #expect(store.state.ticks == expected, "the cancelled outer effect's action was applied")
    }
}
