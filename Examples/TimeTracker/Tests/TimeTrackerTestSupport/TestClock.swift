import Foundation
import Synchronization
import TimeTrackerCore

/// A clock the test moves by hand.
public final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    public init() {}

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: Double) {
        current.withLock { $0 += seconds }
    }

    public func tracker(
        at path: String, safetyNet: Duration = .seconds(5), lockTimeout: Duration = .seconds(5)
    ) throws -> TimeTracker {
        try TimeTracker(path: path, safetyNet: safetyNet, lockTimeout: lockTimeout, now: { self.now })
    }
}
