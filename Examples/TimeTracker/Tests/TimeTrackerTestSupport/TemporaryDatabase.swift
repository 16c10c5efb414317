import Foundation
import GRDB
import Synchronization
import TimeTrackerCore

/// A database path in a directory of its own, removed afterwards.
public final class TemporaryDatabase: Sendable {
    public let directory = FileManager.default.temporaryDirectory.appendingPathComponent("timetrack-\(UUID().uuidString)")
    public var path: String { directory.appendingPathComponent("timetrack.sqlite").path }

    public init() {}

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// Counts rows with a connection of the test's own.
    public func count(_ table: String) throws -> Int {
        try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT COUNT(*) FROM \(table)") ?? 0 }
    }
}

/// A clock the test moves by hand.
public final class TestClock: Sendable {
    private let current = Mutex(Date(timeIntervalSince1970: 1_800_000_000))

    public init() {}

    public var now: Date { current.withLock { $0 } }

    public func advance(by seconds: Double) {
        current.withLock { $0 += seconds }
    }

    public func tracker(at path: String, pollInterval: Duration = .milliseconds(20)) throws -> TimeTracker {
        try TimeTracker(path: path, pollInterval: pollInterval, now: { self.now })
    }
}

/// Polls `condition` until it holds or `timeout` passes.
public func eventually(timeout: Duration = .seconds(5), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while !condition() {
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return true
}
