import Dispatch
import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// A followed container whose last reference goes while a check of its storage is in progress: it ends at once, on
/// the thread that let it go, and frees its key there. A check that held it across the storage's reads would end it
/// later, on the writer, and a container of the same key made meanwhile would be reported as a duplicate.
@Suite("A container let go during a check of its storage")
struct ContainerEndsDuringCheckTests {
    @Test func endsWhenItsLastReferenceGoesAndFreesItsKeyForTheNextContainer() async throws {
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let key = "outside.endsDuringCheck.\(UUID().uuidString)"
        let follow = {
            StateContainer(
                0, key: key, storage: storage, codec: .json, writes: .writeThrough,
                externalChanges: .watch(safetyNet: .seconds(3600)), clock: ManualClock()
            )
        }
        let holder = Locked<StateContainer<Int>?>(follow())
        #expect(storage.watcherCount == 1)

        // A check starts and stays inside the storage's read until the test lets it go on. While it is held, every
        // wait happens on threads of its own: a flush waiting for this writer on the cooperative pool could hold
        // every thread of it meanwhile.
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        storage.holdsNextFingerprint.withLock { $0 = (entered, proceed) }
        storage.notify()
        let endedDuringCheck = await offThePool { () -> Bool? in
            defer { proceed.signal() }
            guard entered.wait(timeout: .now() + .seconds(signalPatience)) == .success else {
                storage.holdsNextFingerprint.withLock { $0 = nil }
                return nil
            }
            // The last reference goes on a thread of its own: the container's `deinit` writes what is pending on
            // the writer, so that thread waits there until the check is over.
            Thread { _ = holder.withLock { $0.take() } }.start()
            // Its `deinit` stops following first. (Not a weak reference read here: a strong reference it lends for a
            // moment may be the last one, and then the `deinit` would wait for the writer on this thread, which
            // alone can let the writer go on.)
            return spinWait(timeout: .seconds(60)) { storage.watcherCount == 0 }
        }
        #expect(endedDuringCheck != nil, "no check started")
        #expect(endedDuringCheck == true, "the check kept the container alive after its last reference went")
        // Its `deinit` is over once the key is free (the registration goes last).
        #expect(await eventually { !KeyRegistry.shared.isLive(key) })

        let reported = Recorder<StatehouseDiagnostic>()
        StatehouseDiagnostics.$handler.withValue({ reported.append($0) }) {
            withExtendedLifetime(follow()) {}
        }
        #expect(reported.elements.map(\.kind).filter { $0 == .duplicateKey }.isEmpty)
    }
}
