import Dispatch
import Foundation
import StatehouseTestSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// Waits of the concurrency tests. Blocking happens on threads of their own (never on Swift's cooperative pool,
// which has one thread per core: blocking it would stall every other suite), and every wait has a deadline.

/// How long a test waits for a signal that is sure to come: only a starved machine makes it matter (the suites run in
/// parallel, under ThreadSanitizer too, on two cores: a task may not run for several seconds).
let signalPatience = 60

/// Waits for `count` signals of `semaphore` on a thread of its own; `false` if they did not all come in `seconds`.
func waitOffThePool(for semaphore: DispatchSemaphore, count: Int = 1, seconds: Int = signalPatience) async -> Bool {
    await offThePool { () -> Bool in
        let deadline = DispatchTime.now() + .seconds(seconds)
        for _ in 0..<count {
            if semaphore.wait(timeout: deadline) == .timedOut { return false }
        }
        return true
    }
}

/// Waits on the calling thread, without suspending (the thread is part of the window under test), until `condition`
/// holds or `timeout` passes; returns whether it held.
@discardableResult
func spinWait(timeout: Duration = .seconds(5), until condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + timeout
    var spins = 0
    while !condition() {
        if ContinuousClock.now >= deadline { return condition() }
        spins += 1
        if spins < 100 {
            sched_yield()
        } else {
            usleep(50)
        }
    }
    return true
}

/// Waits until `condition` holds, checking every 2 ms, at most `seconds`; whether it held.
func waitUntil(_ seconds: Int = 60, _ condition: () -> Bool) async -> Bool {
    await eventually(timeout: .seconds(seconds), every: .milliseconds(2), condition)
}
