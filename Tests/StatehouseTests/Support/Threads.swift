import Dispatch
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A number identifying the calling thread while it runs.
func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

/// Runs `body` on a thread of its own; the semaphore is signalled once it returned.
func onAThreadOfItsOwn(_ body: @escaping @Sendable () -> Void) -> DispatchSemaphore {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return done
}

/// Which thread a test calls from, for closures that must tell its calls from other threads' (0: none).
final class CallerThread: Sendable {
    private let atomic = Atomic<UInt>(0)

    init() {}

    /// Makes the calling thread the caller until ``clear()``.
    func setToCurrent() {
        atomic.store(currentThreadID(), ordering: .sequentiallyConsistent)
    }

    func clear() {
        atomic.store(0, ordering: .sequentiallyConsistent)
    }

    /// Whether the calling thread is the caller.
    var isCurrent: Bool {
        atomic.load(ordering: .sequentiallyConsistent) == currentThreadID()
    }
}

/// Runs `body` on a thread of its own; `false` if it did not return within `seconds` (the thread is then left
/// behind, blocked: a deadlock is reported as a failure instead of hanging the run).
func arFinishes(seconds: Int = 30, _ body: @escaping @Sendable () -> Void) async -> Bool {
    let done = DispatchSemaphore(value: 0)
    Thread.detachNewThread {
        body()
        done.signal()
    }
    return await waitOffThePool(for: done, seconds: seconds)
}
