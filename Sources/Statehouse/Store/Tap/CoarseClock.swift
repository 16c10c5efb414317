import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The time now, to the kernel's tick (a few milliseconds) on Linux: what a tap's event is stamped with, on the
/// store's path. `CLOCK_REALTIME_COARSE` reads the time the kernel last stored, without asking the clock, in a few
/// nanoseconds; `Date()` asks the clock, and cost as much as the rest of a tap. Events keep their order by their
/// place in the log, not by their times.
@usableFromInline
func coarseNow() -> Date {
    #if canImport(Glibc)
    var time = timespec()
    clock_gettime(CLOCK_REALTIME_COARSE, &time)
    return Date(timeIntervalSince1970: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9)
    #else
    return Date()
    #endif
}
