#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A number that identifies the calling thread while it runs, never 0.
///
/// Cancellation compares it with the thread that is inside a listener call, so that a listener can cancel its own
/// subscription without waiting for itself.
@inlinable @inline(__always)
func currentThreadIdentity() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}

/// Gives the processor to another thread while waiting for a listener call on another thread to end.
func yieldThread() {
    sched_yield()
}

/// Sleeps 50 µs, for waits that yielding did not end.
func sleepBriefly() {
    usleep(50)
}
