import Foundation
import StatehouseTestSupport
import StatehouseTesting
import Testing
@testable import Statehouse

/// Coalesced writes and outside-change checks keep time with the clock they are given: a test moves it, and
/// nothing happens before it does.
@Suite("Persistence on a manual clock", .serialized)
struct PersistenceClockTests {
    @Test func aCoalescedWriteHappensWhenTheClockPassesTheWindow() async throws {
        let clock = ManualClock()
        let storage = MemoryStorage()
        let count = StateContainer(
            0, key: "clock.coalesced", storage: storage, codec: .json, writes: .coalesced(window: .seconds(30)),
            externalChanges: .ignore, clock: clock
        )
        for value in 1...5 { count.modify(value) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(29))
        #expect(clock.sleepers() == 1, "the write stopped waiting before its window ended")
        #expect(try storage.load(key: "clock.coalesced") == nil, "written before its window ended")
        clock.advance(by: .seconds(1))
        #expect(await eventually { (try? storage.load(key: "clock.coalesced")) == Data("5".utf8) })
        withExtendedLifetime(count) {}
    }

    @Test func anOutsideChangeIsNoticedWhenTheClockReachesTheNextCheck() async throws {
        let clock = ManualClock()
        let directory = TemporaryDirectory()
        let count = StateContainer(
            0, key: "clock.outside", storage: FileStorage(directory: directory.url), codec: .json, writes: .coalesced,
            externalChanges: .poll(every: .seconds(60)), clock: clock
        )
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        try FileStorage(directory: directory.url).save(Data("41".utf8), key: "clock.outside")
        await clock.waitForSleepers(1)
        #expect(count.value == 0, "reloaded before the check was due")
        clock.advance(by: .seconds(60))
        // Seen through the listener, not by reading `count.value` meanwhile: that read takes the container's lock,
        // and a check that found it held would ask again on the manual clock, which stands still here.
        #expect(await eventually { seen.elements == [41] })
        #expect(count.value == 41)
        token.cancel()
    }

    /// `.watch` on a storage that can detect changes but not notify of them polls at the `.poll` rate, as its
    /// documentation says, not at the safety net's (here an hour).
    @Test func watchingAStorageThatCannotNotifyPollsAtThePollRate() async throws {
        let clock = ManualClock()
        let storage = InMemoryStorage().withoutNotifications  // detects changes by fingerprint, cannot notify
        let count = StateContainer(
            0, key: "clock.detectOnly", storage: storage, codec: .json, writes: .coalesced,
            externalChanges: .watch(safetyNet: .seconds(3600)), clock: clock
        )
        try storage.save(Data("41".utf8), key: "clock.detectOnly")
        await clock.waitForSleepers(1)
        #expect(count.value == 0, "reloaded before the check was due")
        let seen = Recorder<Int>()
        let token = count.observe { seen.append($0) }
        clock.advance(by: ExternalChanges.pollInterval)
        #expect(await eventually { seen.elements.last == 41 })  // not `count.value`: see above
        token.cancel()
    }

    @Test func deallocationWritesWhatIsPendingWithoutWaitingForTheClock() throws {
        let clock = ManualClock()
        let storage = MemoryStorage()
        do {
            let count = StateContainer(
                0, key: "clock.deinit", storage: storage, codec: .json, writes: .coalesced(window: .seconds(3600)),
                externalChanges: .ignore, clock: clock
            )
            count.modify(9)
        }
        #expect(try storage.load(key: "clock.deinit") == Data("9".utf8))
    }
}

