import Dispatch
import Foundation
import Testing
@testable import Statehouse
import StatehouseTestSupport
import StatehouseTesting

/// `.start(n)` runs the effect a test gives for `n`; `.stop(id)` cancels `id`; `.record(text)` logs `text`.
private enum Probe: Equatable, Sendable {
    case start(Int)
    case stop(String)
    case record(String)
}

private struct ProbeLog: Equatable, Sendable {
    var records: [String] = []
}

private func probeStore(_ effect: @escaping @Sendable (Int) -> Effect<Probe>) -> Store<ProbeLog, Probe> {
    Store(initialState: ProbeLog()) { (state: inout ProbeLog, action: Probe) -> Effect<Probe> in
        switch action {
        case .start(let number): return effect(number)
        case .stop(let id): return .cancel(id: id)
        case .record(let text): state.records.append(text)
        }
        return .none
    }
}

private struct Failure: Error, CustomStringConvertible {
    var description: String { "the disk is full" }
}

/// How a test cancels: a reducer's `.cancel(id:)`, or `Store.cancelEffects(id:)`.
enum CancelFrom: CaseIterable, Sendable {
    case reducer, outside
}

private extension Store<ProbeLog, Probe> {
    func cancel(_ id: String, from: CancelFrom) {
        switch from {
        case .reducer: dispatch(.stop(id))
        case .outside: cancelEffects(id: id)
        }
    }
}

@Suite("Effect combinators", .timeLimit(.minutes(5)))
struct StoreEffectCombinatorTests {
    // MARK: map

    @Test func mapTransformsTheActionsOfEveryKindOfEffect() async {
        let store = probeStore { _ in
            Effect<String>.merge(
                .send("sent"),
                .run { send in send("ran") },
                .concatenate(.send("first"), .send("second"))
            )
            .map(Probe.record)
        }
        store.dispatch(.start(0))
        await store.finishEffects()
        #expect(store.state.records.count == 4)
        #expect(Set(store.state.records) == ["sent", "ran", "first", "second"])
    }

    @Test(arguments: CancelFrom.allCases, [false, true])
    func aCancelledMappedEffectsActionsAreDropped(from: CancelFrom, markedBeforeMap: Bool) async {
        let kept = KeptSend<String>()
        let store = probeStore { _ in
            let child = Effect<String>.run { send in kept.keep(send) }
            return markedBeforeMap
                ? child.cancellable(id: "child").map(Probe.record)
                : child.map(Probe.record).cancellable(id: "child")
        }
        store.dispatch(.start(0))
        await store.finishEffects()
        kept("before")
        store.cancel("child", from: from)
        kept("after")
        #expect(store.state.records == ["before"])
    }

    @Test func aMappedEffectsCatchHandlerSendsMappedActions() async {
        let store = probeStore { _ in
            Effect<String>.run { _ in throw Failure() } catch: { error, send in send("caught: \(error)") }
                .map(Probe.record)
        }
        store.dispatch(.start(0))
        await store.finishEffects()
        #expect(store.state.records == ["caught: the disk is full"])
    }

    // MARK: concatenate

    @Test func concatenatedEffectsRunOneAfterAnotherEvenWhenTheFirstIsSlow() async {
        let clock = ManualClock()
        let store = probeStore { _ in
            .concatenate(
                .concatenate(
                    .run { send in
                        send(.record("a1"))
                        try await clock.sleep(for: .seconds(1))
                        send(.record("a2"))
                    },
                    .run { send in send(.record("b")) }
                ),
                .run { send in send(.record("c")) },
                .send(.record("d"))
            )
        }
        store.dispatch(.start(0))
        await clock.waitForSleepers(1)
        #expect(store.state.records == ["a1"])
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.records == ["a1", "a2", "b", "c", "d"])
    }

    @Test func partsThatStartNoTaskRunAtOnce() {
        let store = probeStore { _ in .concatenate(.send(.record("x")), .none, .send(.record("y"))) }
        store.dispatch(.start(0))
        #expect(store.state.records == ["x", "y"])
        #expect(store.runningEffects == 0)
    }

    @Test(arguments: CancelFrom.allCases)
    func cancellingAConcatenationStopsTheRunningPartAndStartsNoOther(from: CancelFrom) async {
        let clock = ManualClock()
        let store = probeStore { _ in
            Effect.concatenate(
                .run { send in send(.record("a")) },
                .run { send in
                    try await clock.sleep(for: .seconds(1))
                    send(.record("b"))
                },
                .run { send in send(.record("c")) }
            )
            .cancellable(id: "sequence")
        }
        store.dispatch(.start(0))
        await clock.waitForSleepers(1)
        store.cancel("sequence", from: from)
        #expect(clock.sleepers() == 0, "the running part's task was not cancelled")
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.records == ["a"])
    }

    @Test func cancellingOnePartLetsTheNextStart() async {
        let clock = ManualClock()
        let store = probeStore { _ in
            .concatenate(
                Effect.run { send in
                    try await clock.sleep(for: .seconds(1))
                    send(.record("a"))
                }
                .cancellable(id: "part"),
                .run { send in send(.record("b")) }
            )
        }
        store.dispatch(.start(0))
        await clock.waitForSleepers(1)
        store.dispatch(.stop("part"))
        await store.finishEffects()
        #expect(store.state.records == ["b"])
    }

    // MARK: run that throws

    @Test func anErrorWithoutAHandlerIsReported() async throws {
        let reported = Recorder<StatehouseDiagnostic>()
        let store = probeStore { _ in
            .run { send in
                send(.record("started"))
                throw Failure()
            }
        }
        await StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
            store.dispatch(.start(0))
            await store.finishEffects()
        }
        #expect(store.state.records == ["started"])
        let diagnostic = try #require(reported.elements.first)
        #expect(reported.count == 1)
        #expect(diagnostic.kind == .unhandledEffectError)
        #expect(diagnostic.message.contains("of a store of Probe threw Failure (the disk is full)"), "\(diagnostic.message)")
        #expect(diagnostic.message.contains("has no catch handler"))
        #expect(diagnostic.message.contains("pass `catch: { error, send in … }` to Effect.run"))
    }

    @Test func anErrorGoesToTheCatchHandlerWithASendOfTheSameEffect() async {
        let reported = Recorder<StatehouseDiagnostic>()
        let store = probeStore { _ in
            .run { _ in throw Failure() } catch: { error, send in send(.record("failed: \(error)")) }
        }
        await StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
            store.dispatch(.start(0))
            await store.finishEffects()
        }
        #expect(store.state.records == ["failed: the disk is full"])
        #expect(reported.elements.isEmpty)
    }

    @Test func errorsOfACancelledEffectAndCancellationErrorsAreNeitherHandledNorReported() async {
        let reported = Recorder<StatehouseDiagnostic>()
        let clock = ManualClock()
        let store = probeStore { number in
            switch number {
            case 0:
                // Turns its cancellation into another error.
                return Effect.run { _ in
                    do { try await clock.sleep(for: .seconds(1)) } catch { throw Failure() }
                } catch: { _, send in
                    send(.record("handled"))
                }
                .cancellable(id: "sleeper")
            default:
                return .run { _ in throw CancellationError() }
            }
        }
        await StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
            store.dispatch(.start(0))
            store.dispatch(.start(1))
            await clock.waitForSleepers(1)
            store.dispatch(.stop("sleeper"))
            await store.finishEffects()
        }
        #expect(store.state.records.isEmpty)
        #expect(reported.elements.isEmpty)
    }

    @Test func aNonThrowingFunctionPassedByNameStillRuns() async {
        let operation: @Sendable (Send<Probe>) async -> Void = { send in send(.record("named")) }
        let store = probeStore { _ in .run(operation) }
        store.dispatch(.start(0))
        await store.finishEffects()
        #expect(store.state.records == ["named"])
    }

    // MARK: debounce

    @Test func onlyTheLastOfABurstOfDebouncedEffectsRunsAfterTheDuration() async {
        let clock = ManualClock()
        let store = probeStore { number in
            Effect.run { send in send(.record("search \(number)")) }
                .debounce(id: "search", for: .seconds(1), clock: clock)
        }
        for number in 1...3 { store.dispatch(.start(number)) }
        await clock.waitForSleepers(1)
        #expect(clock.sleepers() == 1, "a replaced debounce is still waiting")
        clock.advance(by: .milliseconds(999))
        #expect(store.state.records.isEmpty)
        clock.advance(by: .milliseconds(1))
        await store.finishEffects()
        #expect(store.state.records == ["search 3"])
    }

    @Test(arguments: CancelFrom.allCases)
    func cancellingTheIdDropsAPendingDebounce(from: CancelFrom) async {
        let clock = ManualClock()
        let store = probeStore { number in
            Effect.send(.record("search \(number)")).debounce(id: "search", for: .seconds(1), clock: clock)
        }
        store.dispatch(.start(1))
        await clock.waitForSleepers(1)
        store.cancel("search", from: from)
        #expect(clock.sleepers() == 0)
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.records.isEmpty)
    }

    // MARK: throttle

    @Test(arguments: [false, true])
    func throttleRunsTheFirstAtOnceAndKeepsOneForTheEndOfTheWindow(latest: Bool) async {
        let clock = ManualClock()
        let store = probeStore { number in
            Effect.send(.record("\(number)")).throttle(id: "save", for: .seconds(1), clock: clock, latest: latest)
        }
        store.dispatch(.start(1))
        #expect(store.state.records == ["1"])
        store.dispatch(.start(2))
        store.dispatch(.start(3))
        #expect(store.state.records == ["1"])
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.records == ["1", latest ? "3" : "2"])

        // The kept effect opened a new window.
        store.dispatch(.start(4))
        #expect(store.state.records.count == 2)
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.records.last == "4")

        // That window ended with nothing kept: the next effect runs at once.
        clock.advance(by: .seconds(1))
        store.dispatch(.start(5))
        #expect(store.state.records.last == "5")
    }

    @Test(arguments: CancelFrom.allCases)
    func cancellingTheIdEndsTheWindowAndDropsTheKeptEffect(from: CancelFrom) async {
        let clock = ManualClock()
        let store = probeStore { number in
            Effect.send(.record("\(number)")).throttle(id: "save", for: .seconds(1), clock: clock, latest: true)
        }
        store.dispatch(.start(1))
        store.dispatch(.start(2))
        await clock.waitForSleepers(1)
        store.cancel("save", from: from)
        #expect(clock.sleepers() == 0, "the window's timer is still waiting")
        clock.advance(by: .seconds(1))
        await store.finishEffects()
        #expect(store.state.records == ["1"])
        store.dispatch(.start(3))
        #expect(store.state.records == ["1", "3"])
    }

    // MARK: cancelEffects

    @Test func cancelEffectsStopsTheTaskAndDropsWhatTheEffectSendsLater() async {
        let clock = ManualClock()
        let kept = KeptSend<Probe>()
        let store = probeStore { _ in
            Effect.run { send in
                kept.keep(send)
                try await clock.sleep(for: .seconds(1))
                send(.record("woke"))
            }
            .cancellable(id: "timer")
        }
        store.dispatch(.start(0))
        await clock.waitForSleepers(1)
        kept(.record("before"))
        store.cancelEffects(id: "timer")
        #expect(clock.sleepers() == 0)
        kept(.record("after"))
        await store.finishEffects()
        #expect(store.state.records == ["before"])
        #expect(store.runningEffects == 0)
    }
}
