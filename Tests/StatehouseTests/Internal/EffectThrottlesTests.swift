import Testing
@testable import Statehouse
import StatehouseTesting

/// The throttle state machine alone: no store, no tasks; time is a manual clock read, never slept on.
@Suite("EffectThrottles")
struct EffectThrottlesTests {
    let clock = ManualClock()
    let id = AnyHashableSendable("save")
    var window: EffectWindow { EffectWindow(.seconds(1), on: clock) }

    @Test func theFirstRunsTheSecondIsKeptWithATimerAndTheThirdReplacesItOrIsDropped() {
        for latest in [false, true] {
            var throttles = EffectThrottles<Int>()
            #expect(isRunNow(throttles.arrive(1, id: id, window: window, latest: latest)))
            guard case .kept(let timer?, nil) = throttles.arrive(2, id: id, window: window, latest: latest) else {
                Issue.record("the second effect was not kept with a timer")
                return
            }
            switch throttles.arrive(3, id: id, window: window, latest: latest) {
            case .kept(nil, let replaced?): #expect(latest && replaced == 2)
            case .dropped(let dropped): #expect(!latest && dropped == 3)
            default: Issue.record("the third effect was neither kept nor dropped")
            }
            let kept = throttles.windowEnded(id: id, generation: timer.generation, window: window)
            #expect(kept == (latest ? 3 : 2))
            // The kept effect opened a new window.
            #expect(!isRunNow(throttles.arrive(4, id: id, window: window, latest: latest)))
        }
    }

    /// A window of effects nested in a cancellable effect (an `ifLet` child's) ends when that effect is
    /// cancelled, not later when its timer notices: its kept effect is dropped, the next effect runs at once, and
    /// the old timer's end does not touch the new window.
    @Test func cancellingAnIdTheWindowsEffectsAreNestedInEndsTheWindowAtOnce() {
        var throttles = EffectThrottles<Int>()
        let child = AnyHashableSendable("child")
        _ = throttles.arrive(1, id: id, window: window, latest: true, nestedIn: [child])
        guard case .kept(let timer?, nil) = throttles.arrive(2, id: id, window: window, latest: true, nestedIn: [child])
        else {
            Issue.record("the second effect was not kept with a timer")
            return
        }
        #expect(throttles.cancel(id: AnyHashableSendable("elsewhere")).isEmpty)
        #expect(throttles.cancel(id: child) == [2])
        #expect(isRunNow(throttles.arrive(3, id: id, window: window, latest: true)))
        #expect(throttles.timerCancelled(id: id, generation: timer.generation) == nil)
    }

    @Test func aWindowWhoseEndPassedWithNothingKeptLetsTheNextRun() {
        var throttles = EffectThrottles<Int>()
        #expect(isRunNow(throttles.arrive(1, id: id, window: window, latest: false)))
        clock.advance(by: .seconds(1))
        #expect(isRunNow(throttles.arrive(2, id: id, window: window, latest: false)))
    }

    @Test func aKeptEffectHoldsTheWindowOpenUntilItsTimerEndsIt() {
        var throttles = EffectThrottles<Int>()
        _ = throttles.arrive(1, id: id, window: window, latest: true)
        _ = throttles.arrive(2, id: id, window: window, latest: true)
        clock.advance(by: .seconds(5))
        // The clock passed the end, but the timer has not run yet: the newcomer replaces the kept effect.
        guard case .kept(nil, 2?) = throttles.arrive(3, id: id, window: window, latest: true) else {
            Issue.record("an effect ran while another was kept")
            return
        }
    }

    @Test func cancellingEndsTheWindowAndAStaleTimerChangesNothing() {
        var throttles = EffectThrottles<Int>()
        _ = throttles.arrive(1, id: id, window: window, latest: false)
        guard case .kept(let timer?, nil) = throttles.arrive(2, id: id, window: window, latest: false) else {
            Issue.record("the second effect was not kept with a timer")
            return
        }
        #expect(throttles.cancel(id: id) == [2])
        #expect(isRunNow(throttles.arrive(3, id: id, window: window, latest: false)))
        #expect(throttles.windowEnded(id: id, generation: timer.generation, window: window) == nil)
        #expect(throttles.timerCancelled(id: id, generation: timer.generation) == nil)
        #expect(!isRunNow(throttles.arrive(4, id: id, window: window, latest: false)))
    }

    private func isRunNow(_ arrival: EffectThrottles<Int>.Arrival) -> Bool {
        if case .runNow = arrival { return true }
        return false
    }
}
