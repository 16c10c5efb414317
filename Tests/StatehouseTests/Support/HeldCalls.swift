import Dispatch
import Foundation
import StatehouseTestSupport
import Synchronization
@testable import Statehouse
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The listener side of "cancel() returns only once no call is running": its first call says so, waits until
/// `cancel()` has started on another thread, and then stays inside a while longer.
final class CancelProbe: Sendable {
    /// Signalled when the first call starts.
    let entered = DispatchSemaphore(value: 0)
    private let calls = Atomic<Int>(0)
    private let cancelStarted = Atomic<Bool>(false)
    private let firstCallEnded = Atomic<Bool>(false)

    init() {}

    /// The listener's body.
    func call() {
        guard calls.add(1, ordering: .sequentiallyConsistent).newValue == 1 else { return }
        entered.signal()
        spinWait { cancelStarted.load(ordering: .sequentiallyConsistent) }
        // A window, not a wait for a signal: a cancel() that does not wait for this call returns within it. On a
        // machine too slow for it, the test passes falsely; with a correct cancel() it cannot fail.
        usleep(50_000)
        firstCallEnded.store(true, ordering: .sequentiallyConsistent)
    }

    /// Runs `cancel` on a new thread; returns whether the first call had ended when `cancel` returned.
    func cancel(_ cancel: @escaping @Sendable () -> Void) async -> Bool {
        await offThePool { () -> Bool in
            self.cancelStarted.store(true, ordering: .sequentiallyConsistent)
            cancel()
            return self.firstCallEnded.load(ordering: .sequentiallyConsistent)
        }
    }
}

/// A listener of `container` whose call for the value 1 signals `entered`, then waits for `release`: a round held
/// inside its first listener, so that a test can act while the round still has entries ahead.
func listenerHeldAtOne(
    _ container: StateContainer<Int>
) -> (token: SubscriptionToken, entered: DispatchSemaphore, release: DispatchSemaphore) {
    let entered = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    let token = container.observe { value in
        guard value == 1 else { return }
        entered.signal()
        _ = release.wait(timeout: .now() + .seconds(signalPatience))
    }
    return (token, entered, release)
}

/// A listener call held inside until `letOut()`: `entered` is signalled once it is inside, `isInside` says whether
/// it still is.
final class HeldListenerCall: Sendable {
    let entered = DispatchSemaphore(value: 0)
    private let release = DispatchSemaphore(value: 0)
    private let inside = Atomic<Bool>(false)

    func call() {
        inside.store(true, ordering: .sequentiallyConsistent)
        entered.signal()
        _ = release.wait(timeout: .now() + .seconds(signalPatience))
        inside.store(false, ordering: .sequentiallyConsistent)
    }

    var isInside: Bool { inside.load(ordering: .sequentiallyConsistent) }

    func letOut() { release.signal() }
}
