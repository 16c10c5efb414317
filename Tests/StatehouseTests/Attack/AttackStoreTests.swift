import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

private struct AttackTally: Equatable, Sendable {
    var holds = 0
    var pings = 0
    var pongs = 0
    var stops = 0
    var ticks = 0
    var query = ""
    var results: [String] = []
}

private enum AttackTallyAction: Equatable, Sendable {
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
private func pingReducer() -> @Sendable (inout AttackTally, AttackTallyAction) -> Effect<AttackTallyAction> {
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
    _ ticker: @escaping @Sendable (Send<AttackTallyAction>) async -> Void
) -> @Sendable (inout AttackTally, AttackTallyAction) -> Effect<AttackTallyAction> {
    { state, action in
        switch action {
        case .start:
            return .run(ticker).cancellable(id: "attack.ticker")
        case .stop:
            state.stops += 1
            return .cancel(id: "attack.ticker")
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
private func callbackTicker(gate: DispatchSemaphore, sent: DispatchSemaphore) -> @Sendable (Send<AttackTallyAction>) async -> Void {
    { send in
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                _ = gate.wait(timeout: .now() + .seconds(attackPatience))
                send(.tick)
                sent.signal()
                continuation.resume()
            }
        }
    }
}

/// Sends `.tick` from the effect's task once `gate` is signalled, then signals `queued`.
private func taskTicker(gate: DispatchSemaphore, queued: DispatchSemaphore) -> @Sendable (Send<AttackTallyAction>) async -> Void {
    { send in
        _ = await attackWait(for: gate)
        send(.tick)
        queued.signal()
    }
}

/// `.search` runs the only search that matters (`cancelInFlight`); the search for "stale" sends its results once
/// `gate` is signalled, then signals `queued`; any other sends at once.
private func attackSearchReducer(
    gate: DispatchSemaphore, queued: DispatchSemaphore
) -> @Sendable (inout AttackTally, AttackTallyAction) -> Effect<AttackTallyAction> {
    { state, action in
        switch action {
        case .search(let query):
            state.query = query
            return .run { send in
                if query == "stale" { _ = await attackWait(for: gate) }
                send(.results(query))
                if query == "stale" { queued.signal() }
            }
            .cancellable(id: "attack.search", cancelInFlight: true)
        case .results(let query):
            state.results.append(query)
        default:
            break
        }
        return .none
    }
}

private struct AttackShell: Equatable, Sendable {
    var counter = Counter()
    var title = ""
}

private enum AttackShellAction: Equatable, Sendable {
    case counter(CounterAction)
    case retitle(String)
}

private func makeAttackShellStore() -> Store<AttackShell, AttackShellAction> {
    Store(initialState: AttackShell()) { (state: inout AttackShell, action: AttackShellAction) -> Void in
        switch action {
        case .counter(let action): counterReducer(&state.counter, action)
        case .retitle(let title): state.title = title
        }
    }
}

/// An object subscribing to stores through the `StoreSubscribing` mixin; counts the renders from each of two stores.
private final class AttackViewer: StoreSubscribing {
    let fromFirst = AttackCounter()
    let fromSecond = AttackCounter()

    func rendered(from store: Int) {
        if store == 0 {
            fromFirst.increment()
        } else {
            fromSecond.increment()
        }
    }
}

@Suite("Attack: stores under contention (issue 10)", .serialized)
struct AttackStoreTests {
    // MARK: Defect 3

    // Issue 10, defect 3: a store subscription on `.queue`: cancel() returned while a call was running.
    @Test func cancelWaitsForAQueuedSubscriberCallThatIsRunningWhenAnotherStateIsEnqueued() async {
        for round in 0..<3 {
            let store = makeCounterStore()
            let probe = AttackCancelProbe()
            let token = store.subscribe(\.count, initial: false, on: .queue(DispatchQueue(label: "attack.store.queue"))) {
                _ in probe.call()
            }
            store.dispatch(.increment)
            #expect(await attackWait(for: probe.entered), "round \(round): the queued call never started")
            store.dispatch(.increment)  // enqueues another call while the first runs
            let callEnded = await probe.cancel { token.cancel() }
            #expect(callEnded, "round \(round): cancel() returned while the subscriber was still running")
        }
    }

    // MARK: Defect 4

    // Issue 10, defect 4: a `.send` was dropped because the thread applying it was inside a cancelled task, and so were
    // the sends of the actions other threads had queued behind it.
    @Test func sendIsAppliedWhenTheDispatchingTaskIsCancelled() async {
        let store = Store(initialState: AttackTally(), reducer: pingReducer())
        let others = 50
        let queued = DispatchSemaphore(value: 0)
        let held = AttackFlag()
        // While `.hold` is being applied in the cancelled task, another thread queues pings behind it: whoever
        // applies them, their pongs must be applied too.
        let token = store.subscribe(\.holds, initial: false) { _ in
            guard !held.set() else { return }
            Thread.detachNewThread {
                for _ in 0..<others { store.dispatch(.ping) }
                queued.signal()
            }
            // Each ping waits for the one before: the first is queued behind `.hold`, the others follow.
            _ = attackSpin(timeout: .seconds(attackPatience)) { store.inbox.turns.withLock { !$0.queue.isEmpty } }
        }
        let task = Task {
            while !Task.isCancelled { await Task.yield() }
            store.dispatch(.hold)
            store.dispatch(.ping)
        }
        task.cancel()
        await task.value
        #expect(await attackWait(for: queued))
        #expect(await eventually { store.state.pongs == others + 1 }, "pongs: \(store.state.pongs) of \(others + 1)")
        #expect(store.state.pings == others + 1)
        token.cancel()
    }

    // Issue 10, defect 4: a cancelled effect sending from a callback outside its task still had its action applied.
    @Test func aCancelledEffectsCallbackSendIsNotApplied() async {
        for round in 0..<50 {
            let gate = DispatchSemaphore(value: 0)
            let sent = DispatchSemaphore(value: 0)
            let store = Store(initialState: AttackTally(), reducer: tickReducer(callbackTicker(gate: gate, sent: sent)))
            store.dispatch(.start)
            store.dispatch(.stop)  // applied before dispatch returns: the store is idle
            gate.signal()
            #expect(await attackWait(for: sent), "round \(round): the callback never sent")
            await store.finishEffects()
            #expect(store.state.ticks == 0, "round \(round): a tick sent after .cancel(id:) was applied")
        }
    }

    // Issue 10, defect 4: actions an effect queued before `.cancel(id:)` was applied were still reduced after it.
    @Test func actionsACancelledEffectHadQueuedAreDroppedOnceTheCancelIsApplied() async {
        for round in 0..<100 {
            let gate = DispatchSemaphore(value: 0)
            let queued = DispatchSemaphore(value: 0)
            let store = Store(initialState: AttackTally(), reducer: tickReducer(taskTicker(gate: gate, queued: queued)))
            store.dispatch(.start)
            // Runs after `.stop`'s reducer and before its `.cancel(id:)` is carried out: the effect sends a tick now,
            // which queues behind `.stop` (the store is busy on this thread) and must be dropped once the cancel runs.
            let token = store.subscribe(\.stops, initial: false) { _ in
                gate.signal()
                _ = queued.wait(timeout: .now() + .seconds(attackPatience))
            }
            await offThePool { () -> Void in store.dispatch(.stop) }
            #expect(store.state.ticks == 0, "round \(round): a tick queued before .cancel(id:) was reduced after it")
            await store.finishEffects()
            #expect(store.state.ticks == 0, "round \(round)")
            token.cancel()
        }
    }

    // Issue 10, defect 4: with `cancelInFlight`, the result the previous run had queued was still reduced.
    @Test func cancelInFlightDropsWhatThePreviousRunHadQueued() async {
        for round in 0..<100 {
            let gate = DispatchSemaphore(value: 0)
            let queued = DispatchSemaphore(value: 0)
            let store = Store(initialState: AttackTally(), reducer: attackSearchReducer(gate: gate, queued: queued))
            store.dispatch(.search("stale"))
            // Runs after the reducer of the fresh search, before its effect cancels the stale one: the stale search
            // sends its results now; they queue behind the fresh search and must be dropped.
            let token = store.subscribe(\.query, initial: false) { query in
                guard query == "fresh" else { return }
                gate.signal()
                _ = queued.wait(timeout: .now() + .seconds(attackPatience))
            }
            await offThePool { () -> Void in store.dispatch(.search("fresh")) }
            #expect(await eventually { store.state.results.contains("fresh") }, "round \(round)")
            await store.finishEffects()
            #expect(store.state.results == ["fresh"], "round \(round): a cancelled search's results were reduced")
            token.cancel()
        }
    }

    // MARK: Defect 5

    // Issue 10, defect 5: whoever found the store idle processed every action other threads queued meanwhile.
    @Test func aDispatchProcessesAtMostABoundedShareOfOtherThreadsActions() async {
        // The caller's action finds the store idle. Its subscriber (on the caller's thread) starts three threads
        // dispatching and holds the caller until each has queued an action (each waits for it: no more can queue).
        // Then the caller may reduce its own action plus at most 16 of the others'; the waiting callers take turns
        // with the rest, each exactly once.
        await duringThreadStorm {
            let dispatchers = 3
            let perDispatcher = 1_000
            let caller = AttackCallerThread()
            let reducedOnCaller = AttackCounter()
            let store = Store(initialState: Counter()) { (state: inout Counter, action: CounterAction) -> Void in
                if caller.isCurrent { reducedOnCaller.increment() }
                counterReducer(&state, action)
            }
            let dispatched = AttackCounter()
            let dispatchersDone = DispatchSemaphore(value: 0)
            let held = AttackFlag()
            let token = store.subscribe(\.count, initial: false) { _ in
                guard caller.isCurrent, !held.set() else { return }
                for _ in 0..<dispatchers {
                    Thread.detachNewThread {
                        for _ in 0..<perDispatcher {
                            store.dispatch(.increment)
                            dispatched.increment()
                        }
                        dispatchersDone.signal()
                    }
                }
                attackSpin { store.inbox.turns.withLock { $0.queue.count } == dispatchers }
            }
            let reduced = await offThePool { () -> Int in
                caller.setToCurrent()
                store.dispatch(.increment)
                caller.clear()
                return reducedOnCaller.value
            }
            #expect(reduced >= 1)
            #expect(reduced <= 17, "one dispatch reduced \(reduced) actions on its caller's thread")
            #expect(await attackWait(for: dispatchersDone, count: dispatchers))
            let total = 1 + dispatchers * perDispatcher
            #expect(await eventually { store.state.count >= total }, "count \(store.state.count) of \(total)")
            #expect(store.state.count == total, "an action was applied twice")
            token.cancel()
        }
    }

    // MARK: Defect 11

    // Issue 10, defect 11: a recording started during a dispatch on another thread replayed to the wrong state.
    @Test func aRecordingStartedWhileOtherThreadsDispatchReplaysToTheStoresState() async throws {
        let perThread = 500
        var wrong = 0
        for round in 0..<300 {
            let store = makeCounterStore()
            await onNewThreads(3) { thread in
                if thread == 2 {
                    attackSpin { store.state.count >= 50 }
                    store.startRecording()
                } else {
                    for _ in 0..<perThread { store.dispatch(.increment) }
                }
            }
            // Stop once every action is applied (a background thread may still be applying the last ones).
            #expect(await eventually { store.state.count == 2 * perThread }, "round \(round)")
            let recording = try #require(store.stopRecording(), "round \(round)")
            let replayed = recording.state(afterFirst: recording.actions.count) { state, action in
                counterReducer(&state, action)
                return .none
            }
            if replayed != store.state { wrong += 1 }
        }
        #expect(wrong == 0, "\(wrong) of 300 recordings replayed to another state than the store's")
    }

    // MARK: Defect 13

    // Issue 10, defect 13: a parent's subscriber reading its scoped store during the parent's delivery saw the old state.
    @Test func aParentsSubscriberReadsTheScopedStoreAtTheStateItWasCalledWith() {
        let app = makeAttackShellStore()
        let childSlot = AttackSlot<Store<Counter, CounterAction>>()
        let stale = AttackCounter()
        let checked = AttackCounter()
        let check: @Sendable (AttackShell) -> Void = { state in
            guard let child = childSlot.value else { return }
            checked.increment()
            if child.state != state.counter { stale.increment() }
        }
        // Subscribers made before the scoped store and after it, selecting the whole state and a part of it.
        let before = app.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, check)
        let child = app.scope(state: \.counter, action: AttackShellAction.counter)
        childSlot.value = child
        let after = app.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, check)
        let byKeyPath = app.subscribe(\.counter.count) { count in
            if childSlot.value?.state.count != count { stale.increment() }
        }
        for value in 1...100 {
            app.dispatch(.counter(.set(value)))
            child.dispatch(.increment)
            app.dispatch(.retitle("title \(value)"))
        }
        #expect(checked.value > 0)
        #expect(stale.value == 0, "\(stale.value) calls saw the scoped store behind its parent")
        withExtendedLifetime([before, after, byKeyPath]) {}
    }

    // Issue 10, defect 13: the same with several threads dispatching to the parent and to the scoped store.
    @Test func aParentsSubscriberReadsTheScopedStoreAtItsStateWhileThreadsDispatch() async {
        let app = makeAttackShellStore()
        let childSlot = AttackSlot<Store<Counter, CounterAction>>()
        let stale = AttackCounter()
        let checked = AttackCounter()
        let check: @Sendable (AttackShell) -> Void = { state in
            guard let child = childSlot.value else { return }
            checked.increment()
            if child.state != state.counter { stale.increment() }
        }
        let before = app.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, check)
        let child = app.scope(state: \.counter, action: AttackShellAction.counter)
        childSlot.value = child
        let after = app.subscribe(select: { $0 }, isDuplicate: { _, _ in false }, check)
        await onNewThreads(3) { thread in
            for value in 0..<2_000 {
                switch thread {
                case 0: app.dispatch(.counter(.increment))
                case 1: child.dispatch(.increment)
                default: app.dispatch(.retitle("title \(value)"))
                }
            }
        }
        #expect(await eventually { app.state.counter.count == 4_000 })
        #expect(checked.value > 0)
        #expect(stale.value == 0, "\(stale.value) calls saw the scoped store behind its parent")
        withExtendedLifetime([before, after]) {}
    }
}

@Suite("Attack: StoreSubscribing from several threads (issue 10)", .serialized)
struct AttackStoreSubscribingTests {
    // Issue 10, defect 9: two threads subscribing one object to two stores at once lost one of the subscriptions.
    @Test func twoThreadsSubscribingOneObjectToTwoStoresAtOnceKeepBoth() async {
        let rounds = 2_000
        let stores = [makeCounterStore(), makeCounterStore()]
        let viewers = (0..<rounds).map { _ in AttackViewer() }
        let arrivals = AttackCounter()
        await onNewThreads(2) { thread in
            for round in 0..<rounds {
                // A barrier per round, so that both threads subscribe the round's fresh object at the same instant.
                arrivals.increment()
                attackSpin(timeout: .seconds(2)) { arrivals.value >= 2 * (round + 1) }
                viewers[round].subscribe(stores[thread]) { viewer, _ in viewer.rendered(from: thread) }
            }
        }
        // Each subscription rendered once when made; one dispatch to each store renders once more where it stayed.
        for store in stores { store.dispatch(.increment) }
        let lost = viewers.filter { $0.fromFirst.value < 2 || $0.fromSecond.value < 2 }.count
        #expect(lost == 0, "\(lost) of \(rounds) objects lost a subscription")
        withExtendedLifetime(viewers) {}
    }
}
