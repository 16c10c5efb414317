import Foundation
import Statehouse
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// A fresh database on `backend`; a backend that cannot be tested here cancels the test case with the reason (the
/// command that installs PostgreSQL), so that it is reported, never passed silently.
func testDatabase(on backend: TestBackend) throws -> any TestDatabase {
    if let reason = backend.unavailableReason { try Test.cancel(Comment(rawValue: reason)) }
    return try backend.makeDatabase()
}

/// What `tracker` answers to `action`: the project after it, or the refusal.
func outcome(of action: TrackerAction, on tracker: TimeTracker) async -> ActionReply.Outcome {
    do throws(TrackerError) {
        return .success(try await tracker.perform(action))
    } catch {
        return .failure(error)
    }
}

/// What a subscriber rendered, from any thread.
final class Renders: Sendable {
    private let renders = StateContainer<[[String]]>([], key: "renders.\(UUID().uuidString)")
    var all: [[String]] { renders.value }
    var last: [String]? { renders.value.last }
    func append(_ names: [String]) { renders.update { $0.append(names) } }
}

/// A small, repeatable random sequence (SplitMix64), so that a failing sequence fails again.
struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next(upTo bound: Int) -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var value = state
        value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
        value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int((value ^ (value >> 31)) % UInt64(bound))
    }
}
