import Foundation
import Synchronization
@testable import Statehouse

/// Collects what listeners receive, from any thread.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = Locked<[Element]>([])

    func append(_ element: Element) {
        storage.withLock { $0.append(element) }
    }

    var elements: [Element] {
        storage.withLock { $0 }
    }

    var count: Int {
        storage.withLock { $0.count }
    }
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(1))
    }
    return condition()
}

/// Runs `body` on `threads` threads at once and returns when all are done.
func onThreads(_ threads: Int, _ body: @Sendable (_ thread: Int) -> Void) {
    DispatchQueue.concurrentPerform(iterations: threads, execute: body)
}

/// An object whose deallocation can be observed through a weak reference.
final class Witness: Sendable {}
