import Synchronization

/// Where the outcome of an action goes: ``TimeTracker/perform(_:)`` waits on it while the store applies the action.
///
/// Answered exactly once: by the effect that applied the action, or, if the store went away before the action ran,
/// with an error when the reply is released, so that no caller waits forever.
public final class ActionReply: Sendable {
    public typealias Outcome = Result<ProjectSummary?, TrackerError>

    /// The latest time the action may get the database's write lock by: the time it was asked for plus the
    /// tracker's lock timeout, so that waiting in line behind other writes counts too.
    let deadline: ContinuousClock.Instant
    private let continuation: Mutex<CheckedContinuation<Outcome, Never>?>

    init(_ continuation: CheckedContinuation<Outcome, Never>, deadline: ContinuousClock.Instant) {
        self.continuation = Mutex(continuation)
        self.deadline = deadline
    }

    deinit {
        answer(.failure(.database("the tracker was closed before the action could run")))
    }

    func answer(_ outcome: Outcome) {
        continuation.withLock { $0.take() }?.resume(returning: outcome)
    }
}
