import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// One synchronous operation of the storage: the calling thread blocks until the task doing the work reports its
/// outcome, and meanwhile answers the task's one question, if it asks one, on its own thread.
///
/// The question is a transaction's: the task has locked the row and asks what to store instead of the data it
/// read, which the caller's `transform` decides. `transform` must run on the caller's thread: it is a container's
/// `update` body, which relies on running where its `update` was called.
///
/// On `NIOLockedValueBox` (a pthread mutex) rather than `Mutex`: ThreadSanitizer cannot see `Mutex` on Linux and
/// would report false races, and the core's `Locked`, which fixes that, is not visible outside its package.
final class BlockingCall<Outcome: Sendable>: Sendable {
    /// What the caller decided after reading the stored data.
    enum Decision: Sendable {
        /// Store this (`nil`: remove the key).
        case store(Data?)
        /// Store nothing: `transform` threw, or the caller stopped waiting.
        case abandon
    }

    private enum State {
        case running
        case asked(Data?, CheckedContinuation<Decision, Never>)
        case finished(Result<Outcome, any Error>)
        /// The caller stopped waiting: questions get `.abandon`, the outcome is dropped.
        case abandoned
    }

    private let state = NIOLockedValueBox(State.running)
    /// Whether the task started to commit: only then may its work take effect once the caller stopped waiting.
    /// Set only under `state`'s lock, never once the call is abandoned.
    private let commitStarted = NIOLockedValueBox(false)
    /// Signalled once per question and once for the outcome; the caller waits on it.
    private let signal = DispatchSemaphore(value: 0)

    // MARK: The task's side

    /// Asks the caller what to store, given the stored `data`. Asked at most once per call.
    func ask(_ data: Data?) async -> Decision {
        await withCheckedContinuation { continuation in
            let isAbandoned = state.withLockedValue { state in
                if case .abandoned = state { return true }
                state = .asked(data, continuation)
                return false
            }
            if isAbandoned { continuation.resume(returning: .abandon) } else { signal.signal() }
        }
    }

    /// The task is about to send its commit: `false` if the caller stopped waiting, and the commit must then not be
    /// sent. A caller that gave up says the outcome is unknown only if a commit started, and runs no retry then; an
    /// abandoned call that committed later would apply its answer twice.
    func mayCommit() -> Bool {
        state.withLockedValue { state in
            if case .abandoned = state { return false }
            commitStarted.withLockedValue { $0 = true }
            return true
        }
    }

    /// Reports the outcome; the caller returns it.
    func finish(_ outcome: Result<Outcome, any Error>) {
        let isWaited = state.withLockedValue { state in
            if case .abandoned = state { return false }
            state = .finished(outcome)
            return true
        }
        if isWaited { signal.signal() }
    }

    // MARK: The caller's side

    /// Whether the task started to commit. Final once ``wait(until:answer:)`` returned `nil`.
    var didStartCommit: Bool {
        commitStarted.withLockedValue { $0 }
    }

    /// Blocks until the outcome arrives, answering a question with `answer` meanwhile; `nil` if `deadline` passed
    /// first (the call is then abandoned).
    func wait(until deadline: ContinuousClock.Instant, answer: (Data?) -> Decision) -> Result<Outcome, any Error>? {
        while true {
            let remaining = ContinuousClock.now.duration(to: deadline)
            let timedOut = remaining <= .zero
                || signal.wait(timeout: .now() + .nanoseconds(Int(remaining.nanoseconds))) == .timedOut
            let event = state.withLockedValue { state -> State in
                let event = state
                switch state {
                case .running: if timedOut { state = .abandoned }
                case .asked: state = .running
                case .finished, .abandoned: break
                }
                return event
            }
            switch event {
            case .running:
                if timedOut { return nil }
            case .asked(let data, let continuation):
                continuation.resume(returning: answer(data))
            case .finished(let outcome):
                return outcome
            case .abandoned:
                return nil
            }
        }
    }
}

extension Duration {
    /// The whole duration in nanoseconds, saturating at `Int64.max`.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        return overflow ? .max : whole.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
