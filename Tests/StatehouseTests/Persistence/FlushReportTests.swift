import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// Once `flush()` returns, `storageError` tells how the last write went, also when that write was not `flush()`'s:
/// a window's, whose report is still on its way, or the exit's (`flushPendingWrites()`), which reports nothing, even
/// when a later window or exit flush finds nothing left to write. Each owner starts with an error (its stored bytes do
/// not decode) that a successful write must clear.
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

    /// The container's own part of `StatehouseLifecycle.flushPendingWrites()`: in this process the global one would
    /// also write other suites' pending changes, which their tests expect their own `flush()` to write.
    @Test func aChangeWrittenByFlushPendingWritesIsReportedByTheNextFlush() throws {
        let (count, storage) = try Self.containerWithALoadError("flushReport.lifecycle")
        let persistence = try #require(count.persistence as? StatePersistence<Int>)
        #expect(count.storageError?.value?.kind == .undecodable)
        count.modify(1)
        // Written here, reported nowhere: it is the exit's flush.
        persistence.flushAtExit()
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
            // Stored: the window's write ran.
            #expect(await eventually { (try? storage.load(key: key)) == Data("\(round + 1)".utf8) })
            try count.flush()
            #expect(count.storageError?.value == nil, "round \(round)")
        }
    }

    // MARK: The exit's write, and what comes after it

    private static func storageWithBadBytes(_ key: String) throws -> MemoryStorage {
        let storage = MemoryStorage()
        try storage.save(Data("{not json".utf8), key: key)
        return storage
    }

    /// Whether the window scheduled for `persistence` has come due (its write started on the writer): probed on a
    /// copy of the machine, which a change would then have to schedule again.
    private static func windowCameDue<Value>(_ persistence: StatePersistence<Value>, probe: Value) -> Bool {
        var copy = persistence.machine.withLock { $0 }
        return copy.changed(PersistedSnapshot(value: probe, count: .max)) != .nothing
    }

    /// Once the owner's change of its value to 1 waits for its 30 s window: what
    /// `StatehouseLifecycle.flushPendingWrites()` does for this owner alone (without touching other suites'), then
    /// the window comes due and finds nothing left to write.
    private static func flushAtExitThenLetTheWindowPass(
        _ persistence: StatePersistence<Int>, storage: MemoryStorage, key: String, clock: ManualClock
    ) async throws {
        await clock.waitForSleepers(1)
        persistence.flushAtExit()
        #expect(try storage.load(key: key) == Data("1".utf8))
        clock.advance(by: .seconds(30))
        #expect(await eventually { windowCameDue(persistence, probe: 0) })
        persistence.writer.sync {}  // the window's write (of nothing) is over
    }

    /// The exit's flush writes the change (reported nowhere); the window then comes due and finds nothing left to
    /// write. Its empty outcome must not replace the exit's as the one `flush()` reports: `flush()` would then find
    /// neither an outcome to report nor a write to make, and the load error would stay although the change is
    /// stored.
    @Test func aWindowThatFindsNothingLeftDoesNotHideTheExitFlushsWrite() async throws {
        let key = "flushReport.exit.window"
        let storage = try Self.storageWithBadBytes(key)
        let clock = ManualClock()
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(30)),
            externalChanges: .ignore, clock: clock
        )
        let persistence = try #require(count.persistence as? StatePersistence<Int>)
        #expect(count.storageError?.value?.kind == .undecodable)
        count.modify(1)
        try await Self.flushAtExitThenLetTheWindowPass(persistence, storage: storage, key: key, clock: clock)
        try count.flush()
        #expect(count.storageError?.value == nil, "stale: \(String(describing: count.storageError?.value?.kind))")
    }

    /// No clock needed: a second `flushPendingWrites()` (an app may call it from handlers of its own and again at
    /// exit) finds nothing to write, and its empty outcome must not replace the first one's write.
    @Test func aSecondExitFlushDoesNotHideTheFirstOnesWrite() throws {
        let key = "flushReport.exit.twice"
        let storage = try Self.storageWithBadBytes(key)
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(60)),
            externalChanges: .ignore, clock: ManualClock()
        )
        let persistence = try #require(count.persistence as? StatePersistence<Int>)
        #expect(count.storageError?.value?.kind == .undecodable)
        count.modify(1)
        persistence.flushAtExit()
        #expect(try storage.load(key: key) == Data("1".utf8))
        persistence.flushAtExit()
        try count.flush()
        #expect(count.storageError?.value == nil, "stale: \(String(describing: count.storageError?.value?.kind))")
    }

    /// The same through a store: `Store.flush()` is the same `StatePersistence.flush()`.
    @Test func aStoresFlushReportsTheExitFlushsWriteToo() async throws {
        let key = "flushReport.exit.store"
        let storage = try Self.storageWithBadBytes(key)
        let clock = ManualClock()
        let store = Store<Int, Int>(
            initialState: 0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(30)),
            externalChanges: .ignore, clock: clock,
            reducer: { state, action in
                state += action
                return .none
            },
            middleware: []
        )
        let persistence = try #require(store.persistence as? StatePersistence<Int>)
        #expect(store.storageError?.value?.kind == .undecodable)
        store.dispatch(1)
        try await Self.flushAtExitThenLetTheWindowPass(persistence, storage: storage, key: key, clock: clock)
        try store.flush()
        #expect(store.storageError?.value == nil, "stale: \(String(describing: store.storageError?.value?.kind))")
    }

    /// A `storageError` listener that flushes when `flush()` publishes the exit's write does not deadlock (the report
    /// runs after `writer.sync`), and the error is cleared once the outer flush returns.
    @Test func aListenerThatFlushesOnTheEarlierOutcomeDoesNotDeadlock() throws {
        let key = "flushReport.exit.listener"
        let storage = try Self.storageWithBadBytes(key)
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(60)),
            externalChanges: .ignore, clock: ManualClock()
        )
        let persistence = try #require(count.persistence as? StatePersistence<Int>)
        let flushes = Recorder<Bool>()
        let token = try #require(count.storageError).observe { error in
            guard error == nil else { return }
            flushes.append((try? count.flush()) != nil)
        }
        count.modify(1)
        persistence.flushAtExit()
        try count.flush()
        #expect(count.storageError?.value == nil)
        #expect(flushes.elements == [true])
        token.cancel()
    }

    /// `flush()` inside an `update` body (a plain storage: the body runs under the owner's lock, not on the writer)
    /// reports the exit's write without waiting for the owner's lock, and clears the error.
    @Test func aFlushInsideAnUpdateBodyReportsTheEarlierOutcome() throws {
        let key = "flushReport.exit.insideUpdate"
        let storage = try Self.storageWithBadBytes(key)
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(60)),
            externalChanges: .ignore, clock: ManualClock()
        )
        let persistence = try #require(count.persistence as? StatePersistence<Int>)
        count.modify(1)
        persistence.flushAtExit()
        let flushed = count.update { _ in (try? count.flush()) != nil }
        #expect(flushed)
        #expect(count.storageError?.value == nil)
    }

    /// Two threads flush at once after the exit's flush wrote: the one whose `writer.sync` comes first takes the
    /// outcome; the other finds nothing left and nothing to write, and must not return (and read `storageError`)
    /// before the first has published it. The window is narrow: many rounds, counting the flushes that return
    /// early.
    @Test func aConcurrentFlushDoesNotReturnBeforeTheTakenOutcomeIsPublished() async throws {
        let stale = Locked(0)
        // Fewer rounds under ThreadSanitizer, which slows every access tenfold: the same window, fewer tries.
        for round in 0..<(isUnderThreadSanitizer ? 1_500 : 5_000) {
            let key = "flushReport.exit.concurrent.\(round)"
            let storage = try Self.storageWithBadBytes(key)
            let count = StateContainer(
                0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(60)),
                externalChanges: .ignore, clock: ManualClock()
            )
            let persistence = try #require(count.persistence as? StatePersistence<Int>)
            count.modify(1)
            persistence.flushAtExit()
            // Two threads of their own, started together (concurrentPerform may run both flushes on one thread).
            let arrived = Locked(0)
            await onNewThreads(2) { _ in
                arrived.withLock { $0 += 1 }
                while arrived.withLock({ $0 }) < 2 {}
                try? count.flush()
                if count.storageError?.value != nil { stale.withLock { $0 += 1 } }
            }
        }
        let staleFlushes = stale.withLock { $0 }
        #expect(staleFlushes == 0, "\(staleFlushes) of 10,000 flushes returned with the load error still there")
    }
}
