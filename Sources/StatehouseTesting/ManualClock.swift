import Statehouse

/// A clock whose time moves only when a test moves it: for effects that debounce, throttle or wait.
///
/// Give it to the code under test wherever that code takes a `Clock<Duration>`, then move time with
/// ``advance(by:)`` or ``advance(to:)``. A test must not advance before the sleep it means to end has begun (it
/// would end before the sleep starts, and the sleep would wait for the next advance): wait for it with
/// ``waitForSleepers(_:)``.
///
/// ```swift
/// @Test func searchIsDebounced() async {
///     let clock = ManualClock()
///     let store = Store(initialState: Search()) { state, action in
///         searchReducer(&state, action, clock: clock)
///     }
///     store.dispatch(.queryChanged("s"))
///     store.dispatch(.queryChanged("sw"))
///     await clock.waitForSleepers(1)        // the debounce of "sw" waits; that of "s" was cancelled
///     clock.advance(by: .milliseconds(300))
///     await store.finishEffects()
///     #expect(store.state.results == ["sw"])
/// }
/// ```
///
/// Time starts at ``Instant/zero`` and never goes back.
public final class ManualClock: Clock, Sendable {
    /// An instant of a ``ManualClock``: how far its time has been advanced from its start.
    public struct Instant: InstantProtocol, CustomStringConvertible, Sendable {
        /// The time since the clock's start.
        public let offset: Duration

        /// The clock's start.
        public static var zero: Self { Self(offset: .zero) }

        public init(offset: Duration) {
            self.offset = offset
        }

        public func advanced(by duration: Duration) -> Self {
            Self(offset: offset + duration)
        }

        public func duration(to other: Self) -> Duration {
            other.offset - offset
        }

        public static func < (lhs: Self, rhs: Self) -> Bool {
            lhs.offset < rhs.offset
        }

        public var description: String {
            "ManualClock.Instant(\(offset))"
        }
    }

    private let state: Locked<ManualClockState>

    /// - Parameter now: The time to start at.
    public init(now: Instant = .zero) {
        state = Locked(ManualClockState(now: now))
    }

    /// The clock's current time; changes only with ``advance(by:)`` and ``advance(to:)``.
    public var now: Instant {
        state.withLock { $0.now }
    }

    /// Zero: the clock resolves any instant exactly.
    public var minimumResolution: Duration {
        .zero
    }

    /// Returns once the clock has been advanced to `deadline` or past it (at once if it is there already).
    ///
    /// - Parameters:
    ///   - deadline: The instant to wait for.
    ///   - tolerance: Ignored: the clock wakes sleepers exactly when advanced.
    /// - Throws: `CancellationError` if the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            let id = state.makeID()
            state.beginSleep(id)
            return id
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (wakeup: ManualClockState.Wakeup) in
                switch state.withLock({ $0.sleep(id, until: deadline, wakeup) }) {
                case .resume(let wakeup):
                    wakeup.resume()
                case .fail(let wakeup):
                    wakeup.resume(throwing: CancellationError())
                case .sleeping(let reached):
                    for watcher in reached { watcher.resume() }
                }
            }
        } onCancel: {
            state.withLock { $0.cancelSleep(id) }?.resume(throwing: CancellationError())
        }
    }

    /// Moves the time forward by `duration`, and wakes every sleeper whose deadline it reaches.
    ///
    /// The sleepers are resumed in the order of their deadlines; when they then run is up to the tasks' executor.
    ///
    /// - Parameter duration: How far to move; a negative duration does nothing.
    public func advance(by duration: Duration) {
        let woken = state.withLock { state in
            state.advance(to: state.now.advanced(by: max(duration, .zero)))
        }
        for wakeup in woken { wakeup.resume() }
    }

    /// Moves the time forward to `instant` (if it is later than ``now``), and wakes every sleeper whose deadline it
    /// reaches, earliest deadline first.
    ///
    /// - Parameter instant: The new time.
    public func advance(to instant: Instant) {
        let woken = state.withLock { $0.advance(to: instant) }
        for wakeup in woken { wakeup.resume() }
    }

    /// How many tasks are sleeping on the clock now: waiting for a deadline it has not reached.
    public func sleepers() -> Int {
        state.withLock { $0.sleeping }
    }

    /// Returns once at least `count` tasks are sleeping on the clock, or when the calling task is cancelled.
    ///
    /// Call it before ``advance(by:)`` to be sure that the sleeps the advance should end have begun.
    ///
    /// - Parameter count: How many sleepers to wait for.
    public func waitForSleepers(_ count: Int) async {
        let id: UInt64? = state.withLock { state in
            guard !state.hasSleepers(count) else { return nil }
            let id = state.makeID()
            state.beginWatching(id, count: count)
            return id
        }
        guard let id else { return }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (reached: ManualClockState.SleepersReached) in
                state.withLock { $0.watch(id, reached) }?.resume()
            }
        } onCancel: {
            state.withLock { $0.cancelWatching(id) }?.resume()
        }
    }
}
