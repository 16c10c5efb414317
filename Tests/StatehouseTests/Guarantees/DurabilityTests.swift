import Dispatch
import Foundation
import Synchronization
import StatehouseTesting
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// After `flush()` returns, what was accepted is stored: also a `nil` (the entry's removal) before anything was
/// written, in a directory that does not exist yet; and the exit's flush works from inside an `update` body.
@Suite("Durability: a flush writes what was accepted, from anywhere", .serialized)
struct DurabilityTests {
    /// A flush writes every change committed before it was called, also one whose dispatch is still between the
    /// store's lock and telling its persistence. A synced store's outbox relies on it: it reads how far its actions
    /// go, flushes, then pushes that far, and an action pushed but not on disk would give its number to another after
    /// a crash. One thread dispatches while another reads the state, flushes, and reads the storage.
    @Test func aFlushWritesEveryChangeCommittedBeforeIt() async throws {
        let storage = MemoryStorage()
        let key = "flush.covers.\(UUID().uuidString)"
        let store = Store(
            initialState: 0, key: key, storage: storage, writes: .coalesced(window: .seconds(60)), externalChanges: .ignore
        ) { (count: inout Int, step: Int) in count += step }
        let dispatches = 100_000
        let finished = Atomic<Bool>(false)
        let missed = Atomic<Int>(0)
        await onNewThreads(2) { thread in
            guard thread == 1 else {
                for _ in 0..<dispatches { store.dispatch(1) }
                finished.store(true, ordering: .releasing)
                return
            }
            while !finished.load(ordering: .acquiring) {
                let seen = store.state
                try? store.flush()
                let stored = (try? storage.load(key: key)).flatMap { try? JSONDecoder().decode(Int.self, from: $0) } ?? 0
                if stored < seen { missed.add(1, ordering: .relaxed) }
            }
        }
        #expect(missed.load(ordering: .relaxed) == 0)
        try store.flush()
        #expect(try storage.load(key: key).map { try JSONDecoder().decode(Int.self, from: $0) } == dispatches)
    }

    /// Writing `nil` before anything was written needs no directory: the flush succeeds, and nothing is stored.
    @Test func nilBeforeTheFirstWriteSucceedsWithoutTheDirectory() throws {
        let directory = TemporaryDirectory()
        let missing = directory.url.appendingPathComponent("not/created/yet")
        let key = "nil.first"
        let rating = StateContainer<Int?>(
            nil, key: key, storage: .file(directory: missing), writes: .coalesced(window: .seconds(60)),
            externalChanges: .ignore
        )
        rating.modify(nil)
        #expect(throws: Never.self) { try rating.flush() }
        #expect(rating.storageError?.value == nil)
        #expect(try FileStorage(directory: missing).load(key: key) == nil)
    }

    /// A value then `nil`, both before the first write: the write of `nil` needs no directory either.
    @Test func aValueThenNilBeforeTheFirstWriteSucceedsWithoutTheDirectory() throws {
        let directory = TemporaryDirectory()
        let missing = directory.url.appendingPathComponent("not/created/yet")
        let key = "nil.afterValue"
        let rating = StateContainer<Int?>(
            nil, key: key, storage: .file(directory: missing), writes: .coalesced(window: .seconds(60)),
            externalChanges: .ignore
        )
        rating.modify(3)
        rating.modify(nil)
        #expect(throws: Never.self) { try rating.flush() }
        #expect(rating.storageError?.value == nil)
        #expect(try FileStorage(directory: missing).load(key: key) == nil)
        #expect(rating.value == nil)
    }

    /// PersistingState.md: "a flush at exit works even from inside a reducer or an `update` body". On a transactional
    /// storage the update body runs inside `writer.sync`; the exit flush is `writer.sync` again: it must neither
    /// deadlock nor crash.
    /// The container's own part of `StatehouseLifecycle.flushPendingWrites()`: in this process the global one would
    /// also write other suites' pending changes, which their tests expect their own `flush()` to write. The global
    /// one runs in helper processes (`TerminationTests`).
    @Test func flushPendingWritesInsideAnUpdateBodyOnATransactionalStorage() throws {
        let storage = InMemoryStorage()
        let key = "exitFlush.\(UUID().uuidString)"
        let container = StateContainer(0, key: key, storage: storage.withoutNotifications)
        let persistence = try #require(container.persistence as? StatePersistence<Int>)
        container.modify(1)   // pending (coalesced)
        container.update { value in
            value += 1
            persistence.flushAtExit()   // what exit() runs via atexit
        }
        try container.flush()
        #expect(storage.contents(of: key) == Data("2".utf8))
    }
}
