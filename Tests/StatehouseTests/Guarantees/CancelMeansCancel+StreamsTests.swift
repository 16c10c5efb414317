import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// What a loop over a source's `values` reads, how another thread changes the source, and its current value.
private struct ChangingSource: Sendable {
    let values: AsyncStream<Int>
    let change: @Sendable () -> Void
    let current: @Sendable () -> Int
}

/// Cancels the task of a loop over `values` while another thread keeps changing the source, `rounds` times.
/// - Returns: What went wrong first, or `nil`.
private func cancelLoopsWhileTheSourceChanges(rounds: Int, _ makeSource: () -> ChangingSource) async -> String? {
    for round in 0..<rounds {
        let source = makeSource()
        let loop = Task {
            var last = -1
            for await value in source.values {
                if value <= last { return false }
                last = value
            }
            return true
        }
        let stop = Atomic<Bool>(false)
        let stopped = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            while !stop.load(ordering: .relaxed) { source.change() }
            stopped.signal()
        }
        let threshold = Int.random(in: 1..<200)
        _ = await eventually { source.current() > threshold }
        let cancelled = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            loop.cancel()
            cancelled.signal()
        }
        let cancelReturned = await waitOffThePool(for: cancelled)
        stop.store(true, ordering: .relaxed)
        guard cancelReturned else { return "round \(round): Task.cancel() did not return in \(signalPatience) s" }
        guard await waitOffThePool(for: stopped) else { return "round \(round): the changing thread is stuck" }
        guard await loop.value else { return "round \(round): the loop read a value out of order" }
    }
    return nil
}

/// Ending a `values` loop (cancelling its task) while another thread changes the source: `Task.cancel()` returns, the
/// loop ends, and nothing is stuck.
@Suite("Cancel means cancel: values sequences ended while changes flow", .serialized)
struct CancelMeansCancelStreamsTests {
    /// A task's cancellation runs the sequence's `onTermination` inside the task's cancellation handler, which holds
    /// the task's status lock, while a delivery in progress may be a `yield` resuming that very task, waiting for
    /// that lock. So the stream cancels its subscription without waiting for that delivery (a late `yield` is
    /// dropped): `Task.cancel()` returns, and the store's processor goes on.
    @Test func aValuesLoopCancelledWhileTheStoreChangesEnds() async {
        let failure = await cancelLoopsWhileTheSourceChanges(rounds: 200) {
            let store = makeCounterStore()
            return ChangingSource(
                values: store.values(\.count), change: { store.dispatch(.increment) }, current: { store.state.count }
            )
        }
        #expect(failure == nil)
    }

    /// The same for a container's `values`: the container's deliverer goes on.
    @Test func aValuesLoopCancelledWhileTheContainerChangesEnds() async {
        let failure = await cancelLoopsWhileTheSourceChanges(rounds: 200) {
            let container = StateContainer(0, key: "valuesLoop.\(UUID())")
            return ChangingSource(
                values: container.values, change: { container.update { $0 += 1 } }, current: { container.value }
            )
        }
        #expect(failure == nil)
    }

    /// Container and store `values` loops ended (their tasks cancelled) while changes flow: they end, and the
    /// ended sequence does not keep its store.
    @Test func valuesStreamsEndedWhileChangesFlow() async {
        for round in 0..<40 {
            let c = StateContainer(0, key: "merge.streams.\(round).\(UUID().uuidString)")
            let store = Store(initialState: TwoCounters(), reducer: twoCountersReducer)
            let started = DispatchSemaphore(value: 0)
            let containerLoop = Task.detached {
                var first = true
                for await _ in c.values {
                    if first { started.signal(); first = false }
                }
            }
            let storeLoop = Task.detached {
                var first = true
                for await _ in store.values(\.a) {
                    if first { started.signal(); first = false }
                }
            }
            #expect(await waitOffThePool(for: started, count: 2))
            let changer = onAThreadOfItsOwn {
                for _ in 0..<100 {
                    c.modify(c.value + 1)
                    store.dispatch(.a)
                }
            }
            containerLoop.cancel()
            storeLoop.cancel()
            await containerLoop.value
            await storeLoop.value
            #expect(await waitOffThePool(for: changer))
            let weakStore = SharedWeak(store)
            _ = consume store
            #expect(await eventually(timeout: .seconds(signalPatience)) { weakStore.object == nil },
                    "round \(round): the ended stream kept the store")
        }
    }
}
