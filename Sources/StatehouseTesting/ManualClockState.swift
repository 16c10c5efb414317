/// The time and the sleepers of a ``ManualClock``: the logic without the locking. Each method returns the
/// continuations to resume, which the clock resumes outside its lock.
struct ManualClockState: Sendable {
    typealias Wakeup = CheckedContinuation<Void, any Error>
    typealias SleepersReached = CheckedContinuation<Void, Never>

    private enum Sleeper: Sendable {
        /// `sleep` began; its continuation is not registered yet.
        case starting
        /// Cancelled before its continuation was registered: it fails as soon as it is.
        case cancelledWhileStarting
        case sleeping(until: ManualClock.Instant, Wakeup)
    }

    private struct Watcher: Sendable {
        var count: Int
        var continuation: SleepersReached?
    }

    private(set) var now: ManualClock.Instant
    private var sleepers: [UInt64: Sleeper] = [:]
    /// How many `sleepers` are `.sleeping`.
    private(set) var sleeping = 0
    private var watchers: [UInt64: Watcher] = [:]
    private var nextID: UInt64 = 0

    init(now: ManualClock.Instant) {
        self.now = now
    }

    /// A number for one call of `sleep` or `waitForSleepers`.
    mutating func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    // MARK: Sleeping

    /// What `sleep(until:)` does with its continuation.
    enum SleepStart {
        /// Resume it now: the deadline has passed.
        case resume(Wakeup)
        /// Fail it now with `CancellationError`.
        case fail(Wakeup)
        /// It is registered; these watchers now see enough sleepers.
        case sleeping(reached: [SleepersReached])
    }

    mutating func beginSleep(_ id: UInt64) {
        sleepers[id] = .starting
    }

    mutating func sleep(_ id: UInt64, until deadline: ManualClock.Instant, _ wakeup: Wakeup) -> SleepStart {
        if case .cancelledWhileStarting = sleepers.removeValue(forKey: id) { return .fail(wakeup) }
        guard deadline > now else { return .resume(wakeup) }
        sleepers[id] = .sleeping(until: deadline, wakeup)
        sleeping += 1
        return .sleeping(reached: takeReachedWatchers())
    }

    /// The task of sleeper `id` was cancelled: returns its continuation to fail, if it was registered.
    mutating func cancelSleep(_ id: UInt64) -> Wakeup? {
        switch sleepers[id] {
        case .starting:
            sleepers[id] = .cancelledWhileStarting
            return nil
        case .sleeping(_, let wakeup):
            sleepers[id] = nil
            sleeping -= 1
            return wakeup
        case .cancelledWhileStarting, nil:
            return nil
        }
    }

    /// Moves the time to `instant` (never back); returns the sleepers whose deadline it reached, earliest first
    /// (those with equal deadlines in the order they began to sleep).
    mutating func advance(to instant: ManualClock.Instant) -> [Wakeup] {
        if instant > now { now = instant }
        var due: [(deadline: ManualClock.Instant, id: UInt64, wakeup: Wakeup)] = []
        for (id, sleeper) in sleepers {
            if case .sleeping(let deadline, let wakeup) = sleeper, deadline <= now {
                due.append((deadline, id, wakeup))
            }
        }
        for sleeper in due { sleepers[sleeper.id] = nil }
        sleeping -= due.count
        return due.sorted { ($0.deadline, $0.id) < ($1.deadline, $1.id) }.map(\.wakeup)
    }

    // MARK: Watching

    /// Whether `waitForSleepers(count)` can return at once.
    func hasSleepers(_ count: Int) -> Bool {
        sleeping >= count
    }

    mutating func beginWatching(_ id: UInt64, count: Int) {
        watchers[id] = Watcher(count: count, continuation: nil)
    }

    /// Registers a watcher's continuation; returns it if it should resume now (enough sleepers, or cancelled).
    mutating func watch(_ id: UInt64, _ continuation: SleepersReached) -> SleepersReached? {
        guard let watcher = watchers[id], sleeping < watcher.count else {
            watchers[id] = nil
            return continuation
        }
        watchers[id]?.continuation = continuation
        return nil
    }

    /// The task of watcher `id` was cancelled: returns its continuation to resume, if registered.
    mutating func cancelWatching(_ id: UInt64) -> SleepersReached? {
        watchers.removeValue(forKey: id)?.continuation
    }

    private mutating func takeReachedWatchers() -> [SleepersReached] {
        var reached: [SleepersReached] = []
        for (id, watcher) in watchers where watcher.count <= sleeping {
            guard let continuation = watcher.continuation else { continue }
            watchers[id] = nil
            reached.append(continuation)
        }
        return reached
    }
}
