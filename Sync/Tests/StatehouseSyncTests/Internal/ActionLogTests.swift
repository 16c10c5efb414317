import Foundation
@testable import StatehouseSync
import StatehouseSyncWire
import SyncFixtures
import Testing

/// The outbox's log of actions keeps their order through appends, copies and removals, and is encoded as the plain
/// array it stands for (outboxes written before it read the same).
@Suite struct ActionLogTests {
    private func actions(_ seqs: ClosedRange<Int64>) -> [PushedAction<TrackerAction>] {
        seqs.map { PushedAction(seq: $0, action: .count(Int($0))) }
    }

    @Test(arguments: [0, 1, 31, 32, 33, 64, 100])
    func appendsKeepTheOrderAndTheCount(count: Int) {
        var log = ActionLog<TrackerAction>()
        for action in actions(1...Int64(max(count, 1))).prefix(count) { log.append(action) }
        #expect(log.map(\.seq) == (0..<count).map { Int64($0) + 1 })
        #expect(log.count == count && log.isEmpty == (count == 0))
    }

    @Test func aCopyAppendedToLeavesTheOriginalAsItWas() {
        let original = ActionLog(actions(1...70))
        var copy = original
        copy.append(PushedAction(seq: 71, action: .add("x")))
        copy.removeAll { $0.seq <= 40 }
        #expect(original.map(\.seq) == Array(1...70))
        #expect(copy.map(\.seq) == Array(41...71) && copy.count == 31)
    }

    @Test func itIsEncodedAsAnArray() throws {
        let log = ActionLog(actions(1...40))
        // Sorted keys: without them, the order of an object's keys may differ from one encoding to the next.
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let encoded = try encoder.encode(log)
        #expect(encoded == (try encoder.encode(actions(1...40))))
        #expect(try JSONDecoder().decode(ActionLog<TrackerAction>.self, from: encoded).map(\.seq) == Array(1...40))
    }
}
