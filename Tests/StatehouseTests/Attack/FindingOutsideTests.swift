// Findings of the adversarial review of issue 10's fix, kept as regression tests.
import Dispatch
import Foundation
import Synchronization
import Testing
@testable import Statehouse
import StatehouseTestSupport

@Suite(.serialized) struct FindingOutsideTests {
    /// Two outside values read while the container's previous outside value is still being delivered: both takes carry
    /// the same count, the first wins, the second (newer) is dropped, and its fingerprint is recorded as known.
    @Test func aNewerOutsideValueIsDroppedForGood() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("review-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "review.outside.\(UUID().uuidString)"
        let other = FileStorage(directory: dir)
        let container = StateContainer(0, key: key, storage: .file(directory: dir), externalChanges: .poll(every: .milliseconds(20)))
        let seen = Recorder<Int>()
        let token = container.observe { value in
            seen.append(value)
            if value == 1 { Thread.sleep(forTimeInterval: 0.5) }
        }
        try other.save(Data("1".utf8), key: key)
        #expect(await eventually { seen.elements.contains(1) })
        try other.save(Data("2".utf8), key: key)
        try await Task.sleep(for: .milliseconds(100))  // a window: lets a poll read 2 while 1 is still delivered
        try other.save(Data("3".utf8), key: key)
        #expect(await eventually { container.value == 3 }, "memory stays behind storage with no local change pending")
        token.cancel()
    }
}
