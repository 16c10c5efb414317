import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// An owner whose lock the test holds: its change count says it is busy while `busy` is set.
private final class BusyOwner: PersistenceOwner {
    let busy = Locked(true)
    let taken = Recorder<Int>()

    func changeCountReader() -> @Sendable () -> OwnerChangeCount {
        readingItself { $0.busy.withLock { $0 } ? nil : 0 }
    }

    func takeStoredValue(_ value: Int, ifUnchangedSince count: UInt64, refused: @escaping @Sendable () -> Void) {
        taken.append(value)
    }
}

/// Watching keeps time with the clock it is given: a notification is checked at once, the safety net and the
/// retries wait for the clock, and nothing waits for a poll that the test does not let happen.
///
/// The tests see a container's value arrive through a listener, never by reading `value` while a check may run:
/// that read takes the container's lock, and a check that found it held asks again on the manual clock, which these
/// tests do not advance (CI failed `whereWatchingFailsItPollsAtTheOldRateAndSaysWhy` so, once).
@Suite("Watching on a manual clock", .serialized)
struct WatchingClockTests {
    @Test func aNotificationIsCheckedAtOnceWhileTheClockStandsStill() async throws {
        let clock = ManualClock()
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let count = StateContainer(
            0, key: "watchclock.notified", storage: storage, codec: .json, writes: .coalesced,
            externalChanges: .watch(safetyNet: .seconds(60)), clock: clock
        )
        #expect(storage.watcherCount == 1)
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        try storage.base.save(Data("41".utf8), key: "watchclock.notified")  // another process's write
        storage.notify()
        #expect(await eventually { seen.elements.last == 41 })
        #expect(clock.now == .zero)
        withExtendedLifetime(token) {}
    }

    @Test func aCheckThatFindsTheOwnerBusyAsksAgainOnTheClockNotAtTheSafetyNet() async throws {
        let clock = ManualClock()
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications)
        let (_, persistence) = StatePersistence.load(
            key: "watchclock.busy", storage: storage, default: 0, codec: .json, writes: .coalesced,
            externalChanges: .watch(safetyNet: .seconds(60)), clock: clock
        )
        let owner = BusyOwner()
        persistence.start(owner: owner)
        try storage.base.save(Data("41".utf8), key: "watchclock.busy")
        storage.notify()
        // The safety net, and a retry that the busy owner caused.
        await clock.waitForSleepers(2)
        #expect(owner.taken.elements.isEmpty)
        owner.busy.withLock { $0 = false }
        clock.advance(by: .milliseconds(64))  // the longest back-off
        #expect(await eventually { owner.taken.elements == [41] })
        persistence.ownerDidEnd()
    }

    @Test func whereWatchingFailsItPollsAtTheOldRateAndSaysWhy() async throws {
        let clock = ManualClock()
        let refusal = StorageError(
            .io, key: "watchclock.refused", operation: .watch,
            message: "could not watch (no inotify watches left, simulated); raise fs.inotify.max_user_watches"
        )
        let storage = NotifyingStorage(InMemoryStorage().withoutNotifications, refusing: refusal)
        let diagnostics = Recorder<StatehouseDiagnostic>()
        let count = StatehouseDiagnostics.$handler.withValue({ diagnostics.append($0) }) {
            StateContainer(
                0, key: "watchclock.refused", storage: storage, codec: .json, writes: .coalesced,
                externalChanges: .watch(safetyNet: .seconds(60)), clock: clock
            )
        }
        #expect(diagnostics.elements.map(\.kind) == [.watchingUnavailable])
        #expect(diagnostics.elements.first?.message.contains("raise fs.inotify.max_user_watches") == true)
        await clock.waitForSleepers(1)
        try storage.base.save(Data("5".utf8), key: "watchclock.refused")
        clock.advance(by: .milliseconds(249))
        #expect(clock.sleepers() == 1, "polled before the interval ended")
        #expect(count.value == 0)
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { seen.elements.last == 5 })
        withExtendedLifetime(token) {}
    }
}
