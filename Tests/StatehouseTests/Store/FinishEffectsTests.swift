import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("finishEffects waits for every effect's action", .serialized)
struct FinishEffectsTests {
    /// `finishEffects` must not return while an effect's action is queued or being applied, whatever path (lock-free
    /// claim, queue, hand-off) it took. Effects run as tasks and send from the pool while threads dispatch.
    @Test func finishEffectsSeesEveryEffectAction() async {
        // A third of the rounds under ThreadSanitizer, which slows every access tenfold.
        for round in 0..<(isUnderThreadSanitizer ? 10 : 30) {
            let store = Store(initialState: 0, reducer: { (state: inout Int, action: Int) -> Effect<Int> in
                state += 1
                guard action > 0 else { return .none }
                return .run { send in send(action - 1) }
            })
            await onNewThreads(3) { _ in
                for _ in 0..<200 { store.dispatch(3) }
            }
            await store.finishEffects()
            #expect(store.state == 3 * 200 * 4, "round \(round): finishEffects returned with work left")
            let idle = store.inbox.isIdle
            #expect(idle)
        }
    }
}
