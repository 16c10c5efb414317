import Dispatch
import Foundation
import Synchronization
import StatehouseTesting
import Testing
@testable import Statehouse
import StatehouseTestSupport

/// Two fields with one writer each: `b` is only ever replaced (by `modify`), `a` only ever incremented (by `update`).
private struct SplitWriterPair: Codable, Equatable, Sendable {
    var a = 0
    var b = 0
}

/// The Int stored under `key` (as a container stores it: JSON), or `nil`.
private func storedInt(_ storage: some StateStorage, _ key: String) throws -> Int? {
    try storage.load(key: key).map { try JSONDecoder().decode(Int.self, from: $0) }
}

private func storedCounter(_ storage: some StateStorage, _ key: String) throws -> Counter? {
    try storage.load(key: key).map { try JSONDecoder().decode(Counter.self, from: $0) }
}

/// A persisted store's state: `n` is what another process writes, `holds` what local actions count.
private struct PolledCount: Codable, Equatable, Sendable { var n = 0; var pongs = 0; var holds = 0 }

private enum PolledCountAction: Sendable { case slow, ping, hold }

/// `update` and `modify` racing on a persisted container, and changes other processes store, racing local ones: the
/// newest change wins, in memory, in the storage and for listeners; a newer outside change is never dropped.
@Suite("No lost updates: a newer change is never replaced by an older one", .serialized)
struct NoLostUpdatesTests {
    /// A transactional `update` racing `modify`: the update starts from the value in memory whenever a local change
    /// is not stored yet, so it never puts back the older stored value over `modify`'s newer one.
    @Test(arguments: [WritePolicy.writeThrough, .coalesced(window: .milliseconds(1))])
    func aTransactionalUpdateNeverUndoesAConcurrentModify(writes: WritePolicy) async throws {
        // Thread 0 alone writes `b`, with modify, counting up: once modify(b: i) returned, the container's b can
        // only be i or later. Thread 1 increments `a` with update, a transaction on this storage; it must start from
        // the value in memory whenever a local change is not stored yet. (Thread 0's modify carries an `a` read just
        // before, which may undo some of thread 1's increments: that is modify's meaning, so `a` is not checked.)
        let storage = InMemoryStorage().withoutNotifications
        let key = "transaction.\(writes == .writeThrough ? "writeThrough" : "coalesced")"
        let pair = StateContainer(SplitWriterPair(), key: key, storage: storage, writes: writes, externalChanges: .ignore)
        let seenB = Recorder<Int>()
        let token = pair.observe { seenB.append($0.b) }
        let changes = 3_000
        let undone = SharedCounter()
        await onNewThreads(2) { thread in
            if thread == 0 {
                for b in 1...changes {
                    pair.modify(SplitWriterPair(a: pair.value.a, b: b))
                    if pair.value.b < b { undone.increment() }
                }
            } else {
                for _ in 0..<changes { pair.update { $0.a += 1 } }
            }
        }
        #expect(undone.value == 0, "modify's change was replaced by an older stored value")
        try pair.flush()
        #expect(pair.value.b == changes)
        let stored = try JSONDecoder().decode(SplitWriterPair.self, from: try #require(try storage.load(key: key)))
        #expect(stored.b == changes)
        #expect(await eventually { seenB.elements.last == changes })
        let values = seenB.elements
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "a listener saw b go backwards")
        token.cancel()
    }

    /// An outside value the poller read before a local change was made: it was read when no local change was
    /// pending, but it is older than the one made since, and is never applied over it (nor written back).
    @Test(arguments: ["memory", "file"])
    func anOutsideValueReadBeforeALocalChangeNeverReplacesIt(base: String) async throws {
        // Deterministic window: the hook runs inside the poller's load, after it saw the outside change and decided
        // no local change was pending. The local change made there is newer than the outside value, and must win:
        // in memory, on disk after flush, and for the listener, which must never see the older outside value.
        let directory = TemporaryDirectory()
        let baseStorage: any ChangeDetectingStorage =
            base == "file" ? FileStorage(directory: directory.url) : InMemoryStorage().withoutNotifications
        let storage = LoadHookStorage(baseStorage)
        let key = "outside.container.\(base)"
        let count = StateContainer(
            0, key: key, storage: storage, writes: .coalesced(window: .seconds(60)),
            externalChanges: .poll(every: .milliseconds(1))
        )
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        for round in 0..<10 {
            let outside = 10 * round + 1
            let local = 10 * round + 2
            let later = 10 * round + 3
            storage.onNextLoad { count.modify(local) }
            try baseStorage.save(Data("\(outside)".utf8), key: key)  // another process, before the local change
            #expect(await eventually { storage.hookRunCount == round + 1 }, "round \(round): the poller never loaded")
            try count.flush()
            #expect(try storedInt(baseStorage, key) == local, "round \(round): the older outside value was written back")
            // A newer outside value, saved once the local change is stored: it is taken, after anything the poller
            // queued before it (outside values are applied in order), so once it shows, the first one was decided.
            try baseStorage.save(Data("\(later)".utf8), key: key)
            #expect(await eventually { count.value == later }, "round \(round)")
        }
        let values = seen.elements
        #expect(!values.contains(where: { $0 % 10 == 1 }), "an outside value older than a local change was shown: \(values)")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "a listener saw the value go backwards")
        token.cancel()
    }

    /// The same window for a persisted store: an outside state read before a local action never replaces that
    /// action's state.
    @Test func anOutsideStateReadBeforeALocalActionNeverReplacesIt() async throws {
        let baseStorage = InMemoryStorage().withoutNotifications
        let storage = LoadHookStorage(baseStorage)
        let key = "outside.store"
        let store = Store(
            initialState: Counter(), key: key, storage: storage, writes: .coalesced(window: .seconds(60)),
            externalChanges: .poll(every: .milliseconds(1)), reducer: counterReducer
        )
        let seen = Recorder<Int>()
        let token = store.subscribe(\.count) { seen.append($0) }
        for round in 0..<10 {
            let outside = 10 * round + 1
            let local = 10 * round + 2
            let later = 10 * round + 3
            storage.onNextLoad { store.dispatch(.set(local)) }
            try baseStorage.save(try JSONEncoder().encode(Counter(count: outside)), key: key)
            #expect(await eventually { storage.hookRunCount == round + 1 }, "round \(round): the poller never loaded")
            try store.flush()
            #expect(try storedCounter(baseStorage, key)?.count == local, "round \(round)")
            try baseStorage.save(try JSONEncoder().encode(Counter(count: later)), key: key)
            #expect(await eventually { store.state.count == later }, "round \(round)")
        }
        let values = seen.elements
        #expect(!values.contains(where: { $0 % 10 == 1 }), "an outside state older than a local action was shown: \(values)")
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "a subscriber saw the count go backwards")
        token.cancel()
    }

    /// Outside saves racing newer local changes, without a hook: memory and storage end on the last local value,
    /// and listeners never see a value older than one they saw.
    @Test func outsideSavesRacingNewerLocalChangesNeverWin() async throws {
        let storage = InMemoryStorage().withoutNotifications
        let key = "outside.race"
        let count = StateContainer(
            0, key: key, storage: storage, writes: .writeThrough, externalChanges: .poll(every: .milliseconds(1))
        )
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        let rounds = 1_000
        await offThePool { () -> Void in
            for round in 1...rounds {
                try? storage.save(Data("\(10 * round + 1)".utf8), key: key)  // another process: older than what follows
                // A window for the poller to pick up the outside value before the local change (it is shorter when the
                // machine is slow: the test may then pass falsely, never fail falsely).
                usleep(UInt32.random(in: 0...300))
                count.modify(10 * round + 2)
            }
        }
        let last = 10 * rounds + 2
        let settled = await eventually { count.value == last && (try? storedInt(storage, key)) == last }
        #expect(settled, "memory and storage must both end at the last local value")
        #expect(count.value == last)
        #expect(try storedInt(storage, key) == last)
        let values = seen.elements
        #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "a listener saw an older outside value after a local change")
        token.cancel()
    }

    /// Outside values read while the container still delivers an earlier one are handed over with the same change
    /// count, so only the first can be taken: a newer one is not dropped for good, and memory ends at what the
    /// storage holds (with no local change pending, it must not stay behind).
    @Test func aNewerOutsideValueReadDuringADeliveryIsTakenLater() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("outside-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "outside.\(UUID().uuidString)"
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

    /// The same for a persisted store kept busy for a few poll intervals: two outside states are queued with the
    /// same change count; the first is taken, and the newer one is taken after it, not dropped for good.
    @Test func aBusyStoreTakesTheNewerOutsideStateLater() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("polledStore-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: dir) }
        let key = "polledStore.\(UUID().uuidString)"
        let other = FileStorage(directory: dir)
        let store = Store(
            initialState: PolledCount(), key: key, storage: .file(directory: dir),
            externalChanges: .poll(every: .milliseconds(20))
        ) { (state: inout PolledCount, action: PolledCountAction) in
            if case .hold = action { state.holds += 1 }
        }
        // A slow subscriber keeps the processor busy, outside the state lock, after a local change.
        let token = store.subscribe(\.holds, initial: false) { _ in Thread.sleep(forTimeInterval: 0.6) }
        let busy = Thread { store.dispatch(.hold) }
        busy.start()
        #expect(await eventually { store.state.holds == 1 })
        try store.flush()   // the local change is written: outside states are newer from here on
        try other.save(try JSONEncoder().encode(PolledCount(n: 1, holds: 1)), key: key)
        try await Task.sleep(for: .milliseconds(100))  // a window: lets a poll read 1 while the processor is busy
        try other.save(try JSONEncoder().encode(PolledCount(n: 2, holds: 1)), key: key)
        #expect(await eventually { store.state.n == 2 }, "the newer outside state was dropped for good")
        token.cancel()
    }
}
