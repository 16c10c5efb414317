import Dispatch
import Foundation
@_spi(SwiftUI) import Observation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// A followed key's last outside change always reaches a persisted store, as it reaches a container: the state a
/// check hands over is marked saved in the same step as the owner's count moves, so a check that reads the count
/// meanwhile never takes it for a local change not yet written (and skips the key, with nothing to ask again).
@Suite("Following ends on the last outside change, for a store and a container alike", .serialized)
struct StoreFollowingTheLastOutsideChangeTests {
    /// Stores value 1 from outside, and value 2 while the owner takes value 1: in Observation's `didSet`, which a
    /// change calls on the taking thread after the owner's lock is released, then lets the check value 2 asks for
    /// run to its end on the writer before the taking goes on.
    private func storeTwoWhileOneIsTaken(
        _ storage: InMemoryStorage<ContinuousClock>, key: String, _ persistence: StatePersistence<Int>,
        reading read: @escaping () -> Void
    ) async {
        let windowSeen = DispatchSemaphore(value: 0)
        withObservationTracking(read, didSet: { _ in
            storage.changeOutside(key: key, to: jsonNumber(2))
            persistence.writer.sync {}
            windowSeen.signal()
        })
        storage.changeOutside(key: key, to: jsonNumber(1))
        #expect(await waitOffThePool(for: windowSeen))
    }

    /// The window is held open with Observation's `didSet` tracking (what SwiftUI installs), which a change calls
    /// after the owner's lock is released: there another process stores value 2, and the check it asks for runs to
    /// its end on the writer before the handing over of value 1 goes on.
    @Test func aStoreTakesAnOutsideChangeMadeWhileItTakesThePreviousOne() async throws {
        let storage = InMemoryStorage()
        let key = "follow.store.window"
        let store = Store<Int, Int>(
            initialState: 0, key: key, storage: storage, codec: .json, writes: .writeThrough,
            externalChanges: .watch(safetyNet: .seconds(3600)), clock: ManualClock(),
            reducer: { state, action in
                state = action
                return .none
            },
            middleware: []
        )
        let persistence = try #require(store.persistence as? StatePersistence<Int>)
        await storeTwoWhileOneIsTaken(storage, key: key, persistence) { _ = store.state }

        #expect(await eventually(timeout: .seconds(60)) { store.state == 2 }, "the store stayed at \(store.state)")
        #expect(storage.contents(of: key) == jsonNumber(2))
    }

    /// The same window for a container, which marks the value saved under its own lock: it holds.
    @Test func aContainerTakesAnOutsideChangeMadeWhileItTakesThePreviousOne() async throws {
        let storage = InMemoryStorage()
        let key = "follow.container.window"
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .writeThrough,
            externalChanges: .watch(safetyNet: .seconds(3600)), clock: ManualClock()
        )
        let persistence = try #require(count.persistence as? StatePersistence<Int>)
        await storeTwoWhileOneIsTaken(storage, key: key, persistence) { _ = count.value }

        #expect(await eventually(timeout: .seconds(60)) { count.value == 2 }, "the container stayed at \(count.value)")
    }
}
