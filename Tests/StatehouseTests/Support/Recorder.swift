import Foundation
import Synchronization
@testable import Statehouse

/// Runs `body` on `threads` threads at once and returns when all are done.
func onThreads(_ threads: Int, _ body: @Sendable (_ thread: Int) -> Void) {
    DispatchQueue.concurrentPerform(iterations: threads, execute: body)
}

/// An object whose deallocation can be observed through a weak reference.
final class Witness: Sendable {}
