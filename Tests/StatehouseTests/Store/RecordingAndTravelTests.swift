import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("Recording and time travel take their turn among other threads' dispatches", .serialized)
struct RecordingAndTravelTests {
    /// A recording started while other threads dispatch replays to the store's state: it starts between two
    /// actions, in order with the store's work.
    @Test func aRecordingStartedWhileOtherThreadsDispatchReplaysToTheStoresState() async throws {
        let perThread = 500
        var wrong = 0
        let rounds = isUnderThreadSanitizer ? 100 : 300
        for round in 0..<rounds {
            let store = makeCounterStore()
            await onNewThreads(3) { thread in
                if thread == 2 {
                    spinWait { store.state.count >= 50 }
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
        #expect(wrong == 0, "\(wrong) of \(rounds) recordings replayed to another state than the store's")
    }

    /// `travel(to:)` takes its turn among the store's work: an action dispatched before it is applied and recorded
    /// before the travel, not recorded as continuing from the past step (and then thrown away with the replaced
    /// state); the recording replays to the store's state.
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
                _ = hold.wait(timeout: .now() + .seconds(signalPatience))
            }
            store.startRecording()
            for _ in 0..<10 { store.dispatch(.increment) }
            // Another thread keeps the store busy, so what follows is queued, in this order.
            Thread.detachNewThread { store.dispatch(.rename("hold")) }
            #expect(await waitOffThePool(for: holding), "round \(round)")
            // Each waits for its work, behind the held action: on threads of their own, queued in this order.
            let dispatched = dispatchBehindTheBusyStore(.increment, to: store)  // before travel: applied first
            let travelled = behindTheBusyStore(store) { _ = try? store.travel(to: 5) }
            hold.signal()
            #expect(await waitOffThePool(for: dispatched), "round \(round)")
            #expect(await waitOffThePool(for: travelled), "round \(round)")
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
