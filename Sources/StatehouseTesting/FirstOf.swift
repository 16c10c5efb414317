import Statehouse

/// Runs `work` and returns `true` once it finished, or `false` at `deadline` if it had not (leaving it running):
/// for waits on work that does not respond to cancellation, which a task group would wait for anyway.
func firstOf(
    _ work: @escaping @Sendable () async -> Void,
    orDeadline deadline: ContinuousClock.Instant
) async -> Bool {
    let outcome = Outcome()
    return await withCheckedContinuation { continuation in
        outcome.await(continuation)
        let alarm = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            outcome.settle(false)
        }
        Task {
            await work()
            alarm.cancel()
            outcome.settle(true)
        }
    }
}

/// Resumes the waiter once, with whichever result comes first.
private final class Outcome: Sendable {
    private let waiter = Locked<CheckedContinuation<Bool, Never>?>(nil)

    func await(_ continuation: CheckedContinuation<Bool, Never>) {
        waiter.withLock { $0 = continuation }
    }

    func settle(_ finished: Bool) {
        waiter.withLock { $0.take() }?.resume(returning: finished)
    }
}
