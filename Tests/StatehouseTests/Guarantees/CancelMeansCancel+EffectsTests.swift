import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// What the effects of these tests did: pings and pongs sent back, ticks of a timer, searches and their results.
private struct EffectTally: Equatable, Sendable {
    var holds = 0
    var pings = 0
    var pongs = 0
    var stops = 0
    var ticks = 0
    var query = ""
    var results: [String] = []
}

private enum EffectTallyAction: Equatable, Sendable {
    case hold
    case ping
    case pong
    case start
    case stop
    case tick
    case search(String)
    case results(String)
}

/// `.ping` sends `.pong` back with a `.send` effect, which runs on the thread that applied `.ping`.
private func pingReducer() -> @Sendable (inout EffectTally, EffectTallyAction) -> Effect<EffectTallyAction> {
    { state, action in
        switch action {
        case .hold:
            state.holds += 1
        case .ping:
            state.pings += 1
            return .send(.pong)
        case .pong:
            state.pongs += 1
        default:
            break
        }
        return .none
    }
}

/// `.start` runs `ticker`, a cancellable effect that sends `.tick`; `.stop` cancels it.
private func tickReducer(
    _ ticker: @escaping @Sendable (Send<EffectTallyAction>) async -> Void
) -> @Sendable (inout EffectTally, EffectTallyAction) -> Effect<EffectTallyAction> {
    { state, action in
        switch action {
        case .start:
            return .run(ticker).cancellable(id: "ticker")
        case .stop:
            state.stops += 1
            return .cancel(id: "ticker")
        case .tick:
            state.ticks += 1
        default:
            break
        }
        return .none
    }
}

/// Sends `.tick` from a callback on a thread outside the effect's task once `gate` is signalled, then signals
/// `sent`; the task waits for the callback, so the effect is still running.
private func callbackTicker(gate: DispatchSemaphore, sent: DispatchSemaphore) -> @Sendable (Send<EffectTallyAction>) async -> Void {
    { send in
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                _ = gate.wait(timeout: .now() + .seconds(signalPatience))
                send(.tick)
                sent.signal()
                continuation.resume()
            }
        }
    }
}

/// Sends `.tick` from the effect's task once `gate` is signalled, then signals `queued`.
private func taskTicker(gate: DispatchSemaphore, queued: DispatchSemaphore) -> @Sendable (Send<EffectTallyAction>) async -> Void {
    { send in
        _ = await waitOffThePool(for: gate)
        send(.tick)
        queued.signal()
    }
}

/// `.search` runs the only search that matters (`cancelInFlight`); the search for "stale" sends its results once
/// `gate` is signalled, then signals `queued`; any other sends at once.
private func searchReducer(
    gate: DispatchSemaphore, queued: DispatchSemaphore
) -> @Sendable (inout EffectTally, EffectTallyAction) -> Effect<EffectTallyAction> {
    { state, action in
        switch action {
        case .search(let query):
            state.query = query
            return .run { send in
                if query == "stale" { _ = await waitOffThePool(for: gate) }
                send(.results(query))
                if query == "stale" { queued.signal() }
            }
            .cancellable(id: "search", cancelInFlight: true)
        case .results(let query):
            state.results.append(query)
        default:
            break
        }
        return .none
    }
}

/// Ticks of a cancellable timer, and how many times it was stopped.
private struct TimerTally: Equatable, Sendable { var ticks = 0; var stops = 0 }
private enum TimerAction: Equatable, Sendable { case start, startNested, stop, stopOuter, tick }

/// A `Send` kept for a callback outside the effect's task.
private final class SendBox: Sendable {
    let send = Locked<Send<TimerAction>?>(nil)
    func keep(_ s: Send<TimerAction>) { send.withLock { $0 = s } }
    func fire(_ a: TimerAction) { send.withLock { $0 }?(a) }
}

/// A cancelled effect's actions are never applied, whichever way they come (its task, a callback outside it, queued
/// before the cancel was applied, a run replaced by `cancelInFlight`); and nothing else is dropped for it: a dispatch
/// made inside a cancelled Swift task is not a cancelled effect.
@Suite("Cancel means cancel: a cancelled effect's actions are never applied, and nothing else is dropped", .serialized)
struct CancelMeansCancelEffectsTests {
    /// A `.send` applied by a thread inside a cancelled task is applied, and so are the sends of the actions other
    /// threads queued behind it: a cancelled task cancels no effect.
    @Test func sendIsAppliedWhenTheDispatchingTaskIsCancelled() async {
        let store = Store(initialState: EffectTally(), reducer: pingReducer())
        let others = 50
        let queued = DispatchSemaphore(value: 0)
        let held = SharedFlag()
        // While `.hold` is being applied in the cancelled task, another thread queues pings behind it: whoever
        // applies them, their pongs must be applied too.
        let token = store.subscribe(\.holds, initial: false) { _ in
            guard !held.set() else { return }
            Thread.detachNewThread {
                for _ in 0..<others { store.dispatch(.ping) }
                queued.signal()
            }
            // Each ping waits for the one before: the first is queued behind `.hold`, the others follow.
            _ = spinWait(timeout: .seconds(signalPatience)) { store.inbox.turns.withLock { !$0.queue.isEmpty } }
        }
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            store.dispatch(.hold)
            store.dispatch(.ping)
        }
        task.cancel()
        await task.value
        #expect(await waitOffThePool(for: queued))
        #expect(await eventually { store.state.pongs == others + 1 }, "pongs: \(store.state.pongs) of \(others + 1)")
        #expect(store.state.pings == others + 1)
        token.cancel()
    }

    /// A cancelled effect sending from a callback outside its task: the action is not applied.
    @Test func aCancelledEffectsCallbackSendIsNotApplied() async {
        for round in 0..<50 {
            let gate = DispatchSemaphore(value: 0)
            let sent = DispatchSemaphore(value: 0)
            let store = Store(initialState: EffectTally(), reducer: tickReducer(callbackTicker(gate: gate, sent: sent)))
            store.dispatch(.start)
            store.dispatch(.stop)  // applied before dispatch returns: the store is idle
            gate.signal()
            #expect(await waitOffThePool(for: sent), "round \(round): the callback never sent")
            await store.finishEffects()
            #expect(store.state.ticks == 0, "round \(round): a tick sent after .cancel(id:) was applied")
        }
    }

    /// Actions an effect queued before `.cancel(id:)` was applied are dropped once it is, never reduced after it.
    @Test func actionsACancelledEffectHadQueuedAreDroppedOnceTheCancelIsApplied() async {
        for round in 0..<100 {
            let gate = DispatchSemaphore(value: 0)
            let queued = DispatchSemaphore(value: 0)
            let store = Store(initialState: EffectTally(), reducer: tickReducer(taskTicker(gate: gate, queued: queued)))
            store.dispatch(.start)
            // Runs after `.stop`'s reducer and before its `.cancel(id:)` is carried out: the effect sends a tick now,
            // which queues behind `.stop` (the store is busy on this thread) and must be dropped once the cancel runs.
            let token = store.subscribe(\.stops, initial: false) { _ in
                gate.signal()
                _ = queued.wait(timeout: .now() + .seconds(signalPatience))
            }
            await offThePool { () -> Void in store.dispatch(.stop) }
            #expect(store.state.ticks == 0, "round \(round): a tick queued before .cancel(id:) was reduced after it")
            await store.finishEffects()
            #expect(store.state.ticks == 0, "round \(round)")
            token.cancel()
        }
    }

    /// With `cancelInFlight`, the result the replaced run had already queued is dropped.
    @Test func cancelInFlightDropsWhatThePreviousRunHadQueued() async {
        for round in 0..<100 {
            let gate = DispatchSemaphore(value: 0)
            let queued = DispatchSemaphore(value: 0)
            let store = Store(initialState: EffectTally(), reducer: searchReducer(gate: gate, queued: queued))
            store.dispatch(.search("stale"))
            // Runs after the reducer of the fresh search, before its effect cancels the stale one: the stale search
            // sends its results now; they queue behind the fresh search and must be dropped.
            let token = store.subscribe(\.query, initial: false) { query in
                guard query == "fresh" else { return }
                gate.signal()
                _ = queued.wait(timeout: .now() + .seconds(signalPatience))
            }
            await offThePool { () -> Void in store.dispatch(.search("fresh")) }
            #expect(await eventually { store.state.results.contains("fresh") }, "round \(round)")
            await store.finishEffects()
            #expect(store.state.results == ["fresh"], "round \(round): a cancelled search's results were reduced")
            token.cancel()
        }
    }

    /// The effect registers a callback and its task ends at once; the callback sends after the effect was
    /// cancelled: the action is dropped, although the task had already ended.
    @Test func cancelAfterTheTaskEndedStillDropsCallbackSends() async {
        let box = SendBox()
        let store = Store(initialState: TimerTally()) { (state: inout TimerTally, action: TimerAction) -> Effect<TimerAction> in
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

    /// A nested cancellable effect whose `Send` escapes its task, used (or not) after that task ended, while the
    /// outer effect's other task still runs: the escaped send is applied (its effect was not cancelled), and
    /// cancelling the outer effect still drops the running task's action (the escaped send must not end the outer
    /// effect's count twice, dropping its handle while its task runs).
    @Test(arguments: [false, true]) func anEscapedNestedSendLeavesTheOuterEffectCancellable(escape: Bool) async throws {
        let box = SendBox()
        let store = Store(initialState: TimerTally()) { (state: inout TimerTally, action: TimerAction) -> Effect<TimerAction> in
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
