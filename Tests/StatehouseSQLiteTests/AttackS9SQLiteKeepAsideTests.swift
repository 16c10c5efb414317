import Foundation
import Statehouse
import StatehouseTestSupport
import Testing
import StatehouseSQLite

/// S9 attack on SQLite: bad bytes another process (here another connection to the same file) stores while a local
/// change waits for its coalesced write are kept aside before that write replaces them.
@Suite("Attack S9: keeping SQLite's outside bytes aside", .serialized)
struct AttackS9SQLiteKeepAsideTests {
    @Test func badBytesStoredDuringTheCoalescingWindowSurviveTheFlush() throws {
        let database = TemporaryDatabase()
        let storage = try SQLiteStorage(path: database.path)
        let other = try SQLiteStorage(path: database.path)
        let key = "s9.sqlite.window"
        // A window no test waits for: the flush writes the change. The watch skips the key meanwhile (a local
        // change is pending), so only the write itself can notice the bytes.
        let count = StateContainer(0, key: key, storage: storage, writes: .coalesced(window: .seconds(3600)))
        count.modify(1)
        let garbage = Data("tampered".utf8)
        try other.save(garbage, key: key)
        try count.flush()
        #expect(try other.load(key: key) == Data("1".utf8))
        let kept = try other.keys().filter { $0.hasPrefix("\(key).undecodable.") }
        #expect(kept.count == 1)
        #expect(try kept.first.flatMap { try other.load(key: $0) } == garbage)
    }
}
