import Statehouse
import StatehouseTesting
import Testing

/// Records the order in which sleepers woke: an actor, so that sleepers resumed in some order re-enter it, and
/// record, in that order.
private actor WakeLog {
    private(set) var woken: [Int] = []

    func sleep(_ label: Int, on clock: ManualClock, until deadline: ManualClock.Instant) async throws {
        try await clock.sleep(until: deadline)
        woken.append(label)
    }
}

@Suite("ManualClock", .timeLimit(.minutes(5)))
struct ManualClockTests {
    @Test func aSleeperWakesOnlyOnceTheClockReachesItsDeadline() async throws {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(until: .zero.advanced(by: .seconds(5))) }
        await clock.waitForSleepers(1)
        clock.advance(by: .seconds(4))
        #expect(clock.sleepers() == 1)
        #expect(clock.now == .zero.advanced(by: .seconds(4)))
        clock.advance(by: .seconds(1))
        #expect(clock.sleepers() == 0)
        try await sleeper.value
        #expect(clock.now.offset == .seconds(5))
    }

    @Test func advanceWakesEverySleeperItReachesInDeadlineOrder() async throws {
        let clock = ManualClock()
        let log = WakeLog()
        var sleepers: [Int: Task<Void, any Error>] = [:]
        for seconds in [3, 1, 4, 2] {
            sleepers[seconds] = Task {
                try await log.sleep(seconds, on: clock, until: .zero.advanced(by: .seconds(seconds)))
            }
        }
        await clock.waitForSleepers(4)
        clock.advance(to: .zero.advanced(by: .seconds(3)))
        #expect(clock.sleepers() == 1)
        for seconds in [1, 2, 3] { try await sleepers[seconds]?.value }
        #expect(await log.woken == [1, 2, 3])
        clock.advance(by: .seconds(10))
        try await sleepers[4]?.value
        #expect(await log.woken == [1, 2, 3, 4])
    }

    @Test func aSleepWhoseDeadlinePassedReturnsAtOnce() async throws {
        let clock = ManualClock(now: .zero.advanced(by: .seconds(10)))
        try await clock.sleep(until: .zero.advanced(by: .seconds(3)))
        try await clock.sleep(for: .zero)
        #expect(clock.sleepers() == 0)
    }

    @Test func cancellingASleepingTaskThrowsCancellationError() async {
        let clock = ManualClock()
        let sleeper = Task { try await clock.sleep(for: .seconds(1)) }
        await clock.waitForSleepers(1)
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleepers() == 0)
    }

    @Test func aTaskCancelledBeforeItSleepsThrowsAtOnce() async {
        let clock = ManualClock()
        let sleeper = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await clock.sleep(for: .seconds(1))
        }
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        #expect(clock.sleepers() == 0)
    }

    @Test func timeNeverGoesBack() {
        let clock = ManualClock()
        clock.advance(by: .seconds(2))
        clock.advance(to: .zero.advanced(by: .seconds(1)))
        clock.advance(by: .seconds(-5))
        #expect(clock.now.offset == .seconds(2))
        #expect(clock.minimumResolution == .zero)
        #expect(clock.now.duration(to: .zero) == .seconds(-2))
    }

    @Test func waitForSleepersReturnsOnceThatManySleep() async throws {
        let clock = ManualClock()
        await clock.waitForSleepers(0)
        let watcher = Task { await clock.waitForSleepers(2) }
        let first = Task { try await clock.sleep(for: .seconds(1)) }
        let second = Task { try await clock.sleep(for: .seconds(2)) }
        await watcher.value
        #expect(clock.sleepers() == 2)
        clock.advance(by: .seconds(2))
        try await first.value
        try await second.value
    }

    @Test func waitForSleepersReturnsWhenItsTaskIsCancelled() async {
        let clock = ManualClock()
        let watcher = Task { await clock.waitForSleepers(1) }
        watcher.cancel()
        await watcher.value
        #expect(clock.sleepers() == 0)
    }
}
