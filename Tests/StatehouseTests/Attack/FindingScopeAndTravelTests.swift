// Windows that a review of issue 10's fixes found still open; each test failed on every run before its fix.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Two fields a parent store sets together, each shown by a scope of its own.
struct SiblingPair: Equatable, Sendable {
    var a = 0
    var b = 0
}

enum SiblingPairAction: Sendable {
    case setBoth(Int)
}

func makePairStore() -> Store<SiblingPair, SiblingPairAction> {
    Store(initialState: SiblingPair()) { (state: inout SiblingPair, action: SiblingPairAction) in
        switch action {
        case .setBoth(let value):
            state.a = value
            state.b = value
        }
    }
}

@Suite("Attack: sibling scopes and time travel (issue 10 review)", .serialized)
struct FindingScopeAndTravelTests {
    // Issue 10, defect 13 (a scoped store lags its parent), for sibling scopes: each scope told its subscribers as
    // soon as it had followed, so a subscriber of the first scope saw the second still at the parent's previous
    // state (100 of 100 calls). Every scope now follows before any subscriber is told.
    @Test func aScopedStoresSubscriberSeesItsSiblingsAtTheParentsState() {
        let parent = makePairStore()
        let scopeA = parent.scope(state: \.a, action: { (action: SiblingPairAction) in action })
        let scopeB = parent.scope(state: \.b, action: { (action: SiblingPairAction) in action })
        let calls = AttackCounter()
        let stale = AttackCounter()
        let token = scopeA.subscribe(\.self, initial: false) { a in
            calls.increment()
            // The parent has the new state; its other view must not be older.
            if scopeB.state != parent.state.b || scopeB.state != a { stale.increment() }
        }
        for value in 1...100 { parent.dispatch(.setBoth(value)) }
        #expect(calls.value == 100)
        #expect(stale.value == 0, "\(stale.value) of \(calls.value) calls saw a sibling scope behind the parent")
        token.cancel()
    }

    // Issue 10, defect 11 (recording bookkeeping outside the store's serialization), for `travel(to:)`: it moved the
    // recorder to the past step at once on the calling thread, while the state was replaced later, in order with the
    // store's other work. An action dispatched before `travel` but applied after was recorded as continuing from the
    // past step, then the replaced state threw its effect away (20 of 20 rounds). Travel now takes its turn.
    @Test func anActionQueuedBeforeTravelIsAppliedAndRecordedBeforeIt() async throws {
        var wrong = 0
        var firstMismatch = ""
        let rounds = 20
        for round in 0..<rounds {
            let hold = DispatchSemaphore(value: 0)
            let holding = DispatchSemaphore(value: 0)
            let store = makeCounterStore()
            let token = store.subscribe(\.name, initial: false) { name in
                guard name == "hold" else { return }
                holding.signal()
                _ = hold.wait(timeout: .now() + .seconds(attackPatience))
            }
            store.startRecording()
            for _ in 0..<10 { store.dispatch(.increment) }
            // Another thread keeps the store busy, so what follows is queued, in this order.
            Thread.detachNewThread { store.dispatch(.rename("hold")) }
            #expect(await attackWait(for: holding), "round \(round)")
            // Each waits for its work, behind the held action: on threads of their own, queued in this order.
            let dispatched = dispatchBehindTheBusyStore(.increment, to: store)  // before travel: applied first
            let travelled = behindTheBusyStore(store) { _ = try? store.travel(to: 5) }
            hold.signal()
            #expect(await attackWait(for: dispatched), "round \(round)")
            #expect(await attackWait(for: travelled), "round \(round)")
            #expect(await eventually { store.state.count == 5 && store.state.name == "" }, "round \(round)")
            store.dispatch(.increment)  // continues from the shown state, step 5
            // The store may still be finishing the travel's round on another thread: the increment then waits its turn.
            #expect(await eventually { store.state.count == 6 }, "round \(round)")
            let recording = try #require(store.recording)
            let replayed = recording.state(afterFirst: recording.actions.count) { state, action in
                counterReducer(&state, action)
                return .none
            }
            if replayed != store.state {
                wrong += 1
                if wrong == 1 { firstMismatch = "store \(store.state.count), recording of \(recording.actions.count) actions replays to \(replayed.count)" }
            }
            token.cancel()
        }
        #expect(wrong == 0, "\(wrong) of \(rounds) recordings no longer replay to the store's state; first: \(firstMismatch)")
    }
}
