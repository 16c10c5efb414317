import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// Once `flush()` returns, `storageError` tells how the last write went, also when that write was not `flush()`'s:
/// a window's, whose report is still on its way, or `flushPendingWrites()`'s, which reports nothing. Each container
/// starts with an error (its stored bytes do not decode) that a successful write must clear.
@Suite("flush() and storageError")
struct FlushReportTests {
    /// A container whose stored bytes do not decode, so its `storageError` starts set.
    private static func containerWithALoadError(
        _ key: String, clock: ManualClock = ManualClock()
    ) throws -> (StateContainer<Int>, MemoryStorage) {
        let storage = MemoryStorage()
        try storage.save(Data("{not json".utf8), key: key)
        let container = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(30)),
            externalChanges: .ignore, clock: clock
        )
        return (container, storage)
    }

    @Test func aChangeWrittenByFlushPendingWritesIsReportedByTheNextFlush() throws {
        let (count, storage) = try Self.containerWithALoadError("flushReport.lifecycle")
        #expect(count.storageError?.value?.kind == .undecodable)
        count.modify(1)
        // Written here, reported nowhere: it is the exit's flush.
        StatehouseLifecycle.flushPendingWrites()
        #expect(try storage.load(key: "flushReport.lifecycle") == Data("1".utf8))
        try count.flush()
        #expect(count.storageError?.value == nil)
    }

    /// The window's write reports from another thread; `flush()` right after it finds nothing left to write. Many
    /// rounds, because each one only opens the window between that write and its report.
    @Test func aWindowsWriteIsReportedByAFlushRightAfterIt() async throws {
        for round in 0..<50 {
            let clock = ManualClock()
            let key = "flushReport.window.\(round)"
            let (count, storage) = try Self.containerWithALoadError(key, clock: clock)
            count.modify(round + 1)
            await clock.waitForSleepers(1)
            clock.advance(by: .seconds(30))
            // Stored: the window's write ran (or another suite's flushPendingWrites did; either needs the report).
            #expect(await eventually { (try? storage.load(key: key)) == Data("\(round + 1)".utf8) })
            try count.flush()
            #expect(count.storageError?.value == nil, "round \(round)")
        }
    }
}
