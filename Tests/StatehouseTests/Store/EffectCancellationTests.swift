import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// "Cancel means cancel", for effects: once `cancel(id:)` has run, no task of the cancelled effects is left running
/// and none of their actions is applied; and `cancelInFlight` cancels what was in flight, never the effect starting.
@Suite("Effect cancellation", .serialized)
struct EffectCancellationTests {
    /// What one effect of the race did: whether its operation started, whether the action it sent right away got
    /// through (the effect was not cancelled yet), and whether the operation ended.
    struct Trace: Sendable {
        var started = Set<Int>()
        var delivered = Set<Int>()
        var ended = Set<Int>()
    }

    /// A store that starts `effect` for the action 0 and appends every other action to its state.
    static func storeStarting(_ effect: @escaping @Sendable () -> Effect<Int>) -> Store<[Int], Int> {
        Store(initialState: [Int]()) { (state: inout [Int], action: Int) -> Effect<Int> in
            guard action == 0 else {
                state.append(action)
                return .none
            }
            return effect()
        }
    }

    /// A cancel on one thread lands while another starts a cancellable task, in the window between the effect's
    /// registration under its id and the start of its task. An operation whose action was dropped (its effect was
    /// cancelled) must end too: its task must have been cancelled, or never started.
    @Test func aCancelBetweenRegistrationAndTheTaskCancelsTheTask() async {
        let runner = EffectRunner<Int>()
        let trace = Locked(Trace())
        let send = Send<Int> { number, origin in
            trace.withLock { _ = $0.delivered.insert(number) }
            origin?.endWork()
        }
        let pairs = 20_000
        let next = Atomic<Int>(0)
        await onNewThreads(2) { thread in
            while true {
                let number = next.add(1, ordering: .relaxed).newValue
                guard number <= pairs else { return }
                let effect = Effect<Int>.run { send in
                    trace.withLock { _ = $0.started.insert(number) }
                    defer { trace.withLock { _ = $0.ended.insert(number) } }
                    send(number)
                    try await Task.sleep(for: .seconds(3_600))
                }
                .cancellable(id: number)
                // Each thread starts its effect and cancels the other thread's, so that the two race.
                if thread == 0 {
                    runner.start(effect, send: send)
                    runner.cancel(id: AnyHashableSendable(number - 1))
                } else {
                    runner.cancel(id: AnyHashableSendable(number - 1))
                    runner.start(effect, send: send)
                }
            }
        }
        // Effects whose operation ran but whose action was dropped were cancelled after they registered: each must end.
        let ended = await eventually {
            trace.withLock { trace in trace.started.subtracting(trace.delivered).isSubset(of: trace.ended) }
        }
        let runningOn = trace.withLock { $0.started.subtracting($0.delivered).subtracting($0.ended).count }
        #expect(ended, "\(runningOn) cancelled effects kept running")
        runner.cancelAll()
    }

    /// `.send(42)` marked twice with the same id, each cancelling in flight: the inner mark must not cancel the outer
    /// one, which is the effect starting, not one in flight.
    @Test func cancellingInFlightSparesTheEffectItIsNestedIn() {
        let store = Self.storeStarting {
            Effect.send(42)
            .cancellable(id: "id", cancelInFlight: true)
            .cancellable(id: "id", cancelInFlight: true)
        }
        store.dispatch(0)
        #expect(store.state == [42])
        store.dispatch(0)
        #expect(store.state == [42, 42])
    }

    /// A cancel in flight still cancels an earlier effect of the id.
    @Test func cancellingInFlightCancelsTheEarlierEffect() async {
        let store = Store(initialState: [Int]()) { (state: inout [Int], action: Int) -> Effect<Int> in
            guard action < 0 else {
                state.append(action)
                return .none
            }
            return .run { send in
                try await Task.sleep(for: .seconds(3_600))
                send(-action)
            }
            .cancellable(id: "id", cancelInFlight: true)
        }
        store.dispatch(-1)
        #expect(store.runningEffects == 1)
        store.dispatch(-2)
        let oneLeft = await eventually { store.runningEffects == 1 }
        #expect(oneLeft, "the first effect was not cancelled by the second")
        store.cancelEffects(id: "id")
        let none = await eventually { store.runningEffects == 0 }
        #expect(none)
    }

    // MARK: - Cancel in flight spares its ancestors — all of them

    /// `.merge(.run { sleep; send(1) }, .send(2).cancellable(id, cancelInFlight: true))` marked `id` once more: the
    /// inner cancel in flight spares the outer effect it is nested in, whose handle stays uncancelled — but the
    /// outer effect's own `.run` task, started a moment before as its sibling, is task-cancelled (it is among the
    /// tasks marked `id`), so its sleep throws and `1` is never sent.
    @Test func cancellingInFlightSparesTheRunningSiblingItIsNestedWith() async {
        let store = Self.storeStarting {
            Effect.merge(
            .run { send in
                // Not throwing, to see whether the task was cancelled: 100 if it was (its send is still let
                // through: its effect, the outer one, is spared).
                let cancelled = (try? await Task.sleep(for: .milliseconds(10))) == nil || Task.isCancelled
                send(cancelled ? 100 : 1)
            },
            Effect.send(2).cancellable(id: "id", cancelInFlight: true)
        )
        .cancellable(id: "id")
        }
        store.dispatch(0)
        let sent = await eventually { store.state.contains(1) }
        #expect(sent, "the spared outer effect's task was cancelled: state \(store.state)")
        #expect(store.state.contains(2))
    }

    /// `.concatenate(.run { send(1) }, .send(2).cancellable(id, cancelInFlight: true), .send(3))` marked `id`: the
    /// concatenation's waiting task is marked `id`, so the middle part's cancel in flight cancels the task starting
    /// it, and the third part never starts.
    @Test func cancellingInFlightSparesTheConcatenationItIsPartOf() async {
        let store = Self.storeStarting {
            Effect.concatenate(
            .run { send in send(1) },
            Effect.send(2).cancellable(id: "id", cancelInFlight: true),
            .send(3)
        )
        .cancellable(id: "id")
        }
        store.dispatch(0)
        let all = await eventually { store.state.count == 3 }
        #expect(all, "the concatenation stopped after the part that cancelled in flight: state \(store.state)")
        #expect(store.state == [1, 2, 3])
    }

    /// The same with the sibling marked with another id too: it is nested in the spared effect, so its task stays
    /// (cancelling it while its actions still went through would leave it half cancelled).
    @Test func cancellingInFlightSparesASiblingNestedUnderAnotherID() async {
        let store = Self.storeStarting {
            Effect.merge(
            Effect<Int>.run { send in
                let cancelled = (try? await Task.sleep(for: .milliseconds(10))) == nil || Task.isCancelled
                send(cancelled ? 100 : 1)
            }
            .cancellable(id: "other"),
            Effect.send(2).cancellable(id: "id", cancelInFlight: true)
        )
        .cancellable(id: "id")
        }
        store.dispatch(0)
        let sent = await eventually { store.state.contains(1) || store.state.contains(100) }
        #expect(sent)
        #expect(store.state.sorted() == [1, 2], "the sibling's task was cancelled: state \(store.state)")
    }
}

// MARK: - Cancelling from outside a reducer, under contention

private struct Tally: Equatable, Sendable {
    var ticks = 0
    var others = 0
    var markers = 0
    var ticksAtFirstMarker = 0
}

private enum TallyAction: Equatable, Sendable {
    case start, hold, tick, other, marker
}

@Suite("Effect cancellation from outside a reducer, under contention", .serialized)
struct CancelEffectsContentionTests {
    /// While the store is held on one thread, effects queue actions from several tasks and other threads dispatch;
    /// `cancelEffects(id:)` then drops every queued action of those effects, and only those.
    @Test func cancelEffectsDropsTheActionsTheEffectsQueuedWhileTheStoreWasBusy() async {
        let senders = 4, perSender = 200, dispatchers = 3, perDispatcher = 100
        for round in 0..<25 {
            let go = DispatchSemaphore(value: 0)
            let holding = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            let sent = SharedCounter()
            let store = Store(initialState: Tally()) { (state: inout Tally, action: TallyAction) -> Effect<TallyAction> in
                switch action {
                case .start:
                    let sender = Effect<TallyAction>.run { send in
                        _ = await waitOffThePool(for: go)
                        for _ in 0..<perSender {
                            send(.tick)
                            sent.increment()
                        }
                    }
                    return Effect.merge(Array(repeating: sender, count: senders)).cancellable(id: "ticks")
                case .hold:
                    holding.signal()
                    _ = release.wait(timeout: .now() + 120)   // a bound, not a signal: the test always releases it
                case .tick: state.ticks += 1
                case .other: state.others += 1
                case .marker: state.markers += 1
                }
                return .none
            }
            store.dispatch(.start)
            // The processor is held on a thread of its own: every action sent from now on is queued.
            Thread.detachNewThread { store.dispatch(.hold) }
            #expect(await waitOffThePool(for: holding))
            for _ in 0..<senders { go.signal() }
            // Each dispatcher waits for its action, queued behind the held one, until the processor is released.
            let dispatching = Task {
                await onNewThreads(dispatchers) { _ in
                    for _ in 0..<perDispatcher { store.dispatch(.other) }
                }
            }
            #expect(await eventually { sent.value == senders * perSender })
            store.cancelEffects(id: "ticks")
            release.signal()
            await dispatching.value
            store.dispatch(.marker)
            #expect(await eventually { store.state.markers == 1 })
            #expect(store.state.ticks == 0, "round \(round): a cancelled effect's queued action was applied")
            #expect(store.state.others == dispatchers * perDispatcher, "round \(round)")
            await store.finishEffects()
        }
    }

    /// Threads send for a cancellable effect without pause while it is cancelled from outside: no action of it is
    /// applied after the first action dispatched once `cancelEffects(id:)` returned.
    @Test func noActionOfTheEffectIsAppliedAfterCancelEffectsReturns() async {
        for round in 0..<20 {
            let kept = KeptSend<TallyAction>()
            let store = Store(initialState: Tally()) { (state: inout Tally, action: TallyAction) -> Effect<TallyAction> in
                switch action {
                case .start:
                    return .run { send in kept.keep(send) }.cancellable(id: "ticks")
                case .tick:
                    state.ticks += 1
                case .marker:
                    if state.markers == 0 { state.ticksAtFirstMarker = state.ticks }
                    state.markers += 1
                default:
                    break
                }
                return .none
            }
            store.dispatch(.start)
            await store.finishEffects()
            let stop = SharedFlag()
            let sends = SharedCounter()
            let senders = Task {
                await onNewThreads(4) { _ in
                    while !stop.isSet, sends.value < 1_000_000 {
                        kept(.tick)
                        sends.increment()
                    }
                }
            }
            #expect(await eventually { sends.value >= 500 })
            store.cancelEffects(id: "ticks")
            store.dispatch(.marker)
            let sentAtCancel = sends.value
            #expect(await eventually { sends.value >= sentAtCancel + 500 })
            stop.set()
            await senders.value
            store.dispatch(.marker)
            #expect(await eventually { store.state.markers == 2 })
            #expect(
                store.state.ticks == store.state.ticksAtFirstMarker,
                "round \(round): an action of the cancelled effect was applied after cancelEffects returned"
            )
        }
    }
}
