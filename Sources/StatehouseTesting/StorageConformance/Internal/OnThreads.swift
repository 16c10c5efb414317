import Foundation
import Statehouse

/// Runs `body(0)`, …, `body(count - 1)` each on a thread of its own, at once, and returns when all have returned.
///
/// Threads rather than tasks: a storage call blocks its thread (on a lock, on `fsync`), and blocked tasks would
/// starve Swift's cooperative pool, which has one thread per core.
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) async {
    guard count > 0 else { return }
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let remaining = Countdown(count) { continuation.resume() }
        for index in 0..<count {
            Thread {
                body(index)
                remaining.tick()
            }.start()
        }
    }
}

/// Calls `done` when it has been ticked as many times as it was told.
private final class Countdown: Sendable {
    private let remaining: Locked<Int>
    private let done: @Sendable () -> Void

    init(_ count: Int, done: @escaping @Sendable () -> Void) {
        remaining = Locked(count)
        self.done = done
    }

    func tick() {
        let isLast = remaining.withLock { remaining in
            remaining -= 1
            return remaining == 0
        }
        if isLast { done() }
    }
}
