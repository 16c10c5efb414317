import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport
import StatehouseTesting

@Suite("Store effects")
struct StoreEffectTests {
    @Test func sendDispatchesRightAfterTheCurrentAction() {
        let store = Store(initialState: Search(), reducer: searchReducer())
        store.dispatch(.ping)
        #expect(store.state.pongs == 1)
    }

    @Test func runSendsActionsBackAndTheStoreCanWaitForIt() async {
        let clock = ManualClock()
        let store = Store(initialState: Search(), reducer: searchReducer(clock: clock, delay: .seconds(1)))
        store.dispatch(.search("swift"))
        #expect(store.runningEffects == 1)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.results == ["swift"])
        #expect(store.runningEffects == 0)
    }

    @Test func mergeRunsEveryEffect() async {
        let store = Store(initialState: Search(), reducer: searchReducer())
        store.dispatch(.both)
        await store.finishEffects()
        #expect(store.state.pongs == 2)
    }

    @Test func cancelInFlightKeepsOnlyTheLatest() async {
        let clock = ManualClock()
        let store = Store(initialState: Search(), reducer: searchReducer(clock: clock, delay: .seconds(1)))
        store.dispatch(.search("a"))
        store.dispatch(.search("ab"))
        store.dispatch(.search("abc"))
        // The cancelled searches end at once (their sleeps throw) and try to send; the last one sleeps alone.
        #expect(await eventually { store.runningEffects == 1 && clock.sleepers() == 1 })
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.results == ["abc"])
    }

    @Test func cancelStopsTheEffectAndDropsWhatItWouldSend() async {
        // The clock never moves: only the cancellation ends the search, which then tries to send.
        let store = Store(initialState: Search(), reducer: searchReducer(clock: ManualClock(), delay: .seconds(1)))
        store.dispatch(.search("a"))
        store.dispatch(.cancel)
        await store.finishEffects()
        #expect(store.state.results.isEmpty)
    }
}

/// `finishEffects()` and the actions effects queue behind a busy store. Serialized: the test holds the store on a
/// thread.
@Suite("finishEffects and queued effect actions", .serialized)
struct FinishEffectsQueuedActionTests {
    enum Chain: Equatable, Sendable {
        case start, hold, next, done
    }

    /// `finishEffects()` waits for every effect, "including those started by actions that effects sent meanwhile".
    /// An effect sends `.next` while another thread is applying an action, so `.next` is queued; the effect's task
    /// then ends, and no task runs. `.next` starts another effect once applied: `finishEffects()` must wait for it
    /// too, not return while an action an effect sent is still queued.
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
                // finishEffects waits for this action, which the test releases below; the bound keeps a test that
                // never gets there from hanging.
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
