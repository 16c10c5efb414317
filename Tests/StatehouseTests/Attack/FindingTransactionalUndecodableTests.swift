// Findings of the adversarial review of issue 13: bytes that do not decode are never written over before a copy
// exists, also by an update that runs as a transaction.
import Foundation
import Testing
@testable import Statehouse
import StatehouseTesting

@Suite struct FindingTransactionalUndecodableTests {
    /// Another version of the program stored bytes this one cannot decode, and nothing followed the key: before the
    /// fix the transaction decoded them as "nothing stored" and wrote the update over them, keeping no copy.
    @Test func anUpdateInATransactionKeepsBytesThatDoNotDecodeAsideBeforeWritingOverThem() throws {
        let storage = AttackMemoryStorage()
        let key = "transaction.undecodable"
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .writeThrough, externalChanges: .ignore,
            clock: ManualClock()
        )
        let alien = Data("not a number".utf8)
        try storage.save(alien, key: key)  // another process, a newer format
        count.update { $0 += 1 }
        #expect(count.value == 1)
        #expect(try storage.load(key: key) == Data("1".utf8))
        let error = try #require(count.storageError?.value)
        #expect(error.kind == .undecodable)
        #expect(error.key == key)
        #expect(!error.message.contains("not a number"))
        let kept = try #require(error.keptAside)
        #expect(try storage.load(key: kept) == alien)
    }
}
