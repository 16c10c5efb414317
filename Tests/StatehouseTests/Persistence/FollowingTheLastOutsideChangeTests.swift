import Dispatch
import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// A followed key's last outside change always reaches the container, however the checks that follow it interleave
/// with the values they hand over.
@Suite("Following ends on the last outside change")
struct FollowingTheLastOutsideChangeTests {
    /// A container following `key` on a clock that never ticks (only notifications check), whose applier is held
    /// in the delivery of value 1, stored outside already: what checks hand over next waits behind it until
    /// `releaseApplier` is signalled.
    private struct HeldFollower {
        let storage = InMemoryStorage()
        let key: String
        let count: StateContainer<Int>
        let seen = Recorder<Int>()
        let releaseApplier = DispatchSemaphore(value: 0)
        let token: SubscriptionToken

        init(key: String) async {
            self.key = key
            count = StateContainer(
                0, key: key, storage: storage, codec: .json, writes: .writeThrough,
                externalChanges: .watch(safetyNet: .seconds(3600)), clock: ManualClock()
            )
            let applierHeld = DispatchSemaphore(value: 0)
            token = count.observe { [seen, releaseApplier] value in
                seen.append(value)
                if value == 1 {
                    applierHeld.signal()
                    releaseApplier.wait()
                }
            }
            storage.changeOutside(key: key, to: jsonNumber(1))
            #expect(await waitOffThePool(for: applierHeld))
        }

        /// Stores `number` outside and waits until a check has read it.
        func changeOutsideAndWaitForTheRead(_ number: Int) async {
            let loads = storage.callCount(of: .load)
            storage.changeOutside(key: key, to: jsonNumber(number))
            #expect(await eventually { storage.callCount(of: .load) == loads + 1 })
        }
    }

    /// The window: a check hands the value it read to the container, and the next check reads the container's change
    /// count before that value lands. By the time it compares, the landing has marked a newer count as saved, so the
    /// count it holds looks like a local change not yet written — which would make it skip the read, and nothing
    /// would ask again. A count older than the saved one is stale, not pending: the check must look again.
    @Test func aCheckThatReadTheCountBeforeThePreviousValueLandedLooksAgain() async throws {
        let follower = await HeldFollower(key: "follow.stale-count")
        await follower.changeOutsideAndWaitForTheRead(2)

        // The next check has read the count (still that of value 1) when it asks for the fingerprint: let value 2
        // land then.
        follower.storage.inject(.run { [follower] in
            follower.releaseApplier.signal()
            spinWait(timeout: .seconds(120)) { follower.seen.elements.last == 2 }
        }, into: .fingerprint)
        follower.storage.changeOutside(key: follower.key, to: jsonNumber(3))

        #expect(await eventually { follower.seen.elements.last == 3 })
        #expect(follower.storage.faultCount(of: .fingerprint) == 1)
        #expect(follower.seen.elements == [1, 2, 3])
        follower.token.cancel()
    }

    /// The window: two checks read values with the same count of the owner, so the second value is refused when the
    /// first lands, and the refusal forgets its fingerprint for the next check to read the key again. If a check
    /// queued before that refusal runs first, it finds the fingerprint still known and reads nothing; the refusal's
    /// own request must then make another, or the last value is never read.
    @Test func aRefusedValueIsReadAgainEvenWhenACheckWasQueuedBeforeTheRefusal() async throws {
        let follower = await HeldFollower(key: "follow.refused")
        let persistence = try #require(follower.count.persistence as? StatePersistence<Int>)
        // Both read with the owner at count 1, and wait behind the held delivery.
        await follower.changeOutsideAndWaitForTheRead(2)
        await follower.changeOutsideAndWaitForTheRead(3)

        // A check holds the writer; another is queued behind it.
        let writerHeld = DispatchSemaphore(value: 0)
        let releaseWriter = DispatchSemaphore(value: 0)
        follower.storage.inject(.run {
            writerHeld.signal()
            releaseWriter.wait()
        }, into: .fingerprint)
        follower.storage.notifyWatchers(of: follower.key)
        #expect(await waitOffThePool(for: writerHeld))
        follower.storage.notifyWatchers(of: follower.key)

        // Value 2 lands; value 3 is refused, and its refusal queues behind the queued check.
        follower.releaseApplier.signal()
        await withCheckedContinuation { continuation in persistence.applier.async { continuation.resume() } }
        #expect(follower.seen.elements == [1, 2])
        releaseWriter.signal()

        #expect(await eventually { follower.seen.elements.last == 3 })
        #expect(follower.seen.elements == [1, 2, 3])
        follower.token.cancel()
    }

    /// Thousands of outside changes as fast as one thread can make them: the container may skip some (a check reads
    /// the newest), never goes back, and ends on the last.
    @Test(arguments: 0..<8)
    func aBurstOfOutsideChangesEndsOnTheLast(round: Int) async throws {
        let storage = InMemoryStorage()
        let key = "follow.burst.\(round)"
        let count = StateContainer(
            0, key: key, storage: storage, codec: .json, writes: .writeThrough,
            externalChanges: .watch(safetyNet: .seconds(3600))
        )
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        let last = 2_000
        for number in 1...last { storage.changeOutside(key: key, to: jsonNumber(number)) }
        #expect(await eventually { seen.elements.last == last })
        #expect(zip(seen.elements, seen.elements.dropFirst()).allSatisfy { $0 < $1 })
        #expect(count.value == last)
        token.cancel()
    }
}
