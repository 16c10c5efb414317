import Dispatch
import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

private let garbage = Data("{not a number".utf8)

private func keptAside(_ storage: InMemoryStorage<ContinuousClock>, _ key: String) -> [String] {
    storage.keys.filter { $0.hasPrefix("\(key).undecodable.") }
}

/// A container of `key` that does not follow it, on a clock that never ticks: writes wait for `flush()`.
private func notFollowing(_ key: String, on storage: InMemoryStorage<ContinuousClock>) -> StateContainer<Int> {
    StateContainer(
        0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(1)),
        externalChanges: .ignore, clock: ManualClock()
    )
}

/// Writes 50 through `count` and checks the garbage under `key` was kept aside first: a known issue, `why`.
private func writeFiftyExpectingACopyOfTheGarbage(
    _ count: StateContainer<Int>, _ storage: InMemoryStorage<ContinuousClock>, _ key: String, knownIssue why: Comment
) throws {
    count.modify(50)
    try count.flush()

    #expect(storage.contents(of: key) == jsonNumber(50))
    withKnownIssue(why) {
        #expect(keptAside(storage, key).count == 1, "written over without a copy; keys: \(storage.keys)")
    }
}

/// Bad data another process stores right after this process loaded the key: the load remembers no fingerprint of
/// what it read (a follower reads one when it starts following, later), so the first write, or an update, cannot
/// tell bytes stored since from bytes the load saw. The windows are known and open: the fix is for the load to read
/// the key with its fingerprint (`loadWithFingerprint`) and start from it, and for an update to start from what the
/// load kept aside. Until then each test marks its copy check as a known issue; a test that starts passing fails
/// its known-issue mark, and says the window is closed.
@Suite("Bad data stored right after the load", .serialized)
struct BadDataStoredAroundTheLoadTests {
    /// A container that does not follow its key: bytes stored after its load are written over by its first write.
    @Test func bytesStoredAfterTheLoadAreKeptAsideByTheFirstWrite() throws {
        let storage = InMemoryStorage()
        let key = "around-load.container"
        storage.changeOutside(key: key, to: jsonNumber(7))
        let count = notFollowing(key, on: storage)
        #expect(count.value == 7)
        storage.changeOutside(key: key, to: garbage)

        try writeFiftyExpectingACopyOfTheGarbage(count, storage, key, knownIssue: "the load remembers no fingerprint")
    }

    /// The same with a persisted store.
    @Test func bytesStoredAfterAStoresLoadAreKeptAsideByItsFirstWrite() throws {
        let storage = InMemoryStorage()
        let key = "around-load.store"
        let store = Store(
            initialState: Counter(), key: key, storage: storage, writes: .coalesced(window: .seconds(3600)),
            externalChanges: .ignore, reducer: counterReducer
        )
        storage.changeOutside(key: key, to: garbage)

        store.dispatch(.set(9))
        try store.flush()

        #expect(storage.contents(of: key) != garbage)
        withKnownIssue("the load remembers no fingerprint") {
            #expect(keptAside(storage, key).count == 1, "written over without a copy; keys: \(storage.keys)")
        }
    }

    /// A follower whose first fingerprint read failed: bytes stored after the load, which no check reads (the poll
    /// waits on a clock that never ticks), are written over.
    @Test func aFollowerWhoseFirstFingerprintFailedKeepsBytesStoredAfterTheLoadAside() throws {
        let storage = InMemoryStorage()
        let key = "around-load.fingerprint-failed"
        storage.changeOutside(key: key, to: jsonNumber(7))
        storage.inject(.fail(), into: .fingerprint, .once, keys: .only(key))
        let count = StateContainer(
            0, key: key, storage: storage.withoutNotifications, codec: .json, writes: .coalesced(window: .seconds(1)),
            externalChanges: .poll(every: .seconds(3600)), clock: ManualClock()
        )
        #expect(count.value == 7)
        #expect(storage.faultCount(of: .fingerprint) == 1)

        storage.changeOutside(key: key, to: garbage)
        try writeFiftyExpectingACopyOfTheGarbage(count, storage, key, knownIssue: "the load remembers no fingerprint")
    }

    /// Bytes stored between the load and the follower's first fingerprint read are taken for seen: no check reads
    /// them, and the next write replaces them.
    @Test func bytesStoredBeforeFollowingStartsAreKeptAside() async throws {
        let storage = InMemoryStorage()
        let key = "around-load.before-following"
        storage.changeOutside(key: key, to: jsonNumber(7))
        let storeGarbage: @Sendable () -> Void = { storage.changeOutside(key: key, to: garbage) }
        storage.inject(.run(storeGarbage), into: .fingerprint, .once, keys: .only(key))
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .coalesced(window: .seconds(1)),
            externalChanges: .watch(safetyNet: .seconds(3600)), clock: ManualClock()
        )
        let persistence = try #require(count.persistence as? StatePersistence<Int>)
        await withCheckedContinuation { continuation in persistence.writer.async { continuation.resume() } }
        #expect(count.value == 7)
        #expect(storage.contents(of: key) == garbage)

        try writeFiftyExpectingACopyOfTheGarbage(
            count, storage, key, knownIssue: "following starts from a fingerprint read after the load"
        )
    }

    /// An update on a transactional storage keeps a second copy of bytes the load kept aside.
    @Test func anUpdateKeepsNoSecondCopyOfBytesTheLoadKeptAside() throws {
        let storage = InMemoryStorage()
        let key = "around-load.update"
        storage.changeOutside(key: key, to: garbage)
        let count = notFollowing(key, on: storage)
        let keptAtLoad = keptAside(storage, key)
        #expect(keptAtLoad.count == 1, "keys: \(storage.keys)")

        count.update { $0 += 1 }

        #expect(storage.contents(of: key) == jsonNumber(1))
        withKnownIssue("an update does not know what the load kept aside") {
            #expect(keptAside(storage, key) == keptAtLoad, "keys: \(storage.keys)")
        }
    }

    /// Control: a transaction whose answer was lost but which landed; the next write finds its own bytes, which
    /// decode, and keeps nothing aside.
    @Test func ownCommittedBytesAreNotKeptAsideAfterALostAnswer() throws {
        let storage = InMemoryStorage()
        let key = "around-load.lost-answer"
        storage.changeOutside(key: key, to: jsonNumber(5))
        let count = notFollowing(key, on: storage)
        storage.inject(.failAfterCommit, into: .transact)
        count.update { $0 += 1 }
        #expect(storage.contents(of: key) == jsonNumber(6))

        count.modify(50)
        try count.flush()

        #expect(storage.contents(of: key) == jsonNumber(50))
        #expect(keptAside(storage, key).isEmpty, "keys: \(storage.keys)")
    }
}
