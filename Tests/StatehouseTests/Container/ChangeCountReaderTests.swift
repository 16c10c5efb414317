import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite("A container's change count, read through its link", .serialized)
struct ChangeCountReaderTests {
    /// The container's change-count reader: the count, `.busy` while the link's lock is held, `.ended` once the
    /// container is gone, and it never keeps the container alive.
    @Test func containerChangeCountReaderSaysCountBusyAndEnded() async {
        var container: StateContainer<Int>? = StateContainer(0, key: "cancelstate.reader.\(UUID().uuidString)")
        let weak = SharedWeak(container)
        let reader = container!.changeCountReader()
        let link = container!.link
        #expect(reader() == .count(container!.changeCount))
        container!.modify(5)
        #expect(reader() == .count(container!.changeCount))
        // Held on another thread: busy, not ended and not a wait.
        let locked = DispatchSemaphore(value: 0)
        let unlock = DispatchSemaphore(value: 0)
        let holder = onAThreadOfItsOwn {
            link.state.withLock { _ in
                locked.signal()
                _ = unlock.wait(timeout: .now() + .seconds(signalPatience))
            }
        }
        #expect(await waitOffThePool(for: locked))
        let whileHeld = await offThePool { reader() }
        unlock.signal()
        #expect(await waitOffThePool(for: holder))
        #expect(whileHeld == .busy)
        container = nil
        #expect(weak.object == nil, "the reader kept the container alive")
        #expect(reader() == .ended)
    }

    /// A container's change count is read through its link, as a check reads it on the writer: the count while the
    /// container lives, "busy" while its lock is held (the check asks again later), "ended" once it is gone, and the
    /// reader keeps nothing of the container alive. So a container let go while a check reads its count ends on the
    /// thread that let it go, unlike an owner that reads its own count (`OwnerLetGoDuringCheckTests`).
    @Test func aContainersChangeCountReaderDoesNotKeepItAlive() async throws {
        var container: StateContainer<Int>? = StateContainer(0, key: "ownerDuringCheck.reader.\(UUID())")
        let read = try #require(container).changeCountReader()
        #expect(read() == .count(0))
        container?.modify(1)
        #expect(read() == .count(1))
        let link = try #require(container).link
        let entered = DispatchSemaphore(value: 0)
        let proceed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            link.locked { _ in
                entered.signal()
                _ = proceed.wait(timeout: .now() + .seconds(signalPatience))
            }
        }
        #expect(await waitOffThePool(for: entered))
        #expect(read() == .busy)
        proceed.signal()
        #expect(await offThePool { spinWait(timeout: .seconds(60)) { read() != .busy } })
        weak let weakContainer = container
        container = nil
        #expect(weakContainer == nil, "the reader kept the container alive")
        #expect(read() == .ended)
    }
}
