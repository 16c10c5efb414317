import Foundation
import Synchronization

/// Records a store's actions while asked to, and where time travel has taken the store.
@usableFromInline
final class ActionRecorder<State: Sendable, Action: Sendable>: Sendable {
    private struct Session: Sendable {
        var recording: Recording<State, Action>
        /// Set while the store shows the state after this many actions instead of the latest.
        var travelled: Int?
    }

    @usableFromInline let flag = Atomic<Bool>(false)
    /// Set while the store applies an action an effect sent, if it is recording. Only the store's worker, one
    /// at a time, sets and reads it; atomic because the worker may be another thread from one turn to the next.
    @usableFromInline let effectActionInProgress = Atomic<Bool>(false)
    private let session = Locked<Session?>(nil)

    @usableFromInline init() {}

    /// Whether actions are being recorded; cheap enough to ask on every dispatch.
    @inlinable
    var isRecording: Bool { flag.load(ordering: .relaxed) }

    /// Whether the action being applied was sent by an effect.
    @inlinable
    var isApplyingEffectAction: Bool { effectActionInProgress.load(ordering: .relaxed) }

    /// Runs `route`, the route of an action an effect sent, noting so for the recording.
    @inlinable
    func applyingEffectAction(_ route: () -> Void) {
        guard isRecording else { return route() }
        effectActionInProgress.store(true, ordering: .relaxed)
        defer { effectActionInProgress.store(false, ordering: .relaxed) }
        route()
    }

    func start(from state: State) {
        session.withLock { $0 = Session(recording: Recording(initialState: state)) }
        flag.store(true, ordering: .relaxed)
    }

    func stop() -> Recording<State, Action>? {
        flag.store(false, ordering: .relaxed)
        return session.withLock { session in
            defer { session = nil }
            return session?.recording
        }
    }

    var recording: Recording<State, Action>? {
        session.withLock { $0?.recording }
    }

    /// Appends `action`. After time travel, the actions past the shown state are dropped first: the new action
    /// continues from there.
    @usableFromInline
    func record(_ action: Action, sentByEffect: Bool) {
        session.withLock { session in
            guard var current = session else { return }
            if let travelled = current.travelled {
                current.recording.actions.removeSubrange(travelled...)
                current.travelled = nil
            }
            current.recording.actions.append(RecordedAction(date: Date(), action: action, sentByEffect: sentByEffect))
            session = current
        }
    }

    /// Notes that the store now shows the state after `count` actions, and returns that state; `nil` if the store
    /// is not recording or the recording has fewer actions (a travel and an action since dropped them).
    ///
    /// Called under the store's state lock, which ``record(_:)`` is called under too: no action is recorded between
    /// the replay and the note. The replay runs outside the recorder's own lock, so that a reducer that asks for
    /// the recording does not find it taken.
    func travel(to count: Int, reducer: (inout State, Action) -> Effect<Action>) -> State? {
        guard let recording, count <= recording.actions.count else { return nil }
        let state = recording.state(afterFirst: count, reducer: reducer)
        session.withLock { session in
            session?.travelled = count == recording.actions.count ? nil : count
        }
        return state
    }
}

extension Store {
    /// Starts recording the actions the store applies, from the current state. Starting again starts over.
    ///
    /// Atomic with respect to actions being applied on other threads: the recording starts from a state that either
    /// includes an action, which is then not recorded, or does not, and the action is recorded.
    public func startRecording() {
        core.withLock { recorder.start(from: $0.state) }
    }

    /// Stops recording and returns what was recorded, or `nil` if the store was not recording.
    @discardableResult
    public func stopRecording() -> Recording<State, Action>? {
        recorder.stop()
    }

    /// What has been recorded so far, or `nil` if the store is not recording.
    public var recording: Recording<State, Action>? {
        recorder.recording
    }

    /// Shows the state after the first `step` recorded actions, for debugging: `0` is the state when recording
    /// started, `recording.actions.count` the latest. Subscribers are told as for any change. Dispatching from a
    /// past state continues from it and drops the recorded actions after it.
    ///
    /// The travel takes its turn like an action: actions dispatched before it are applied and recorded first, and
    /// the state shown and the recording's position change together, under the state lock, so that the recording
    /// always reproduces the store.
    ///
    /// - Throws: ``TimeTravelError`` if the store is not recording or `step` is out of range.
    public func travel(to step: Int) throws(TimeTravelError) {
        guard case .root(let root) = role, let recording = recorder.recording else { throw .notRecording }
        let reducer = root.reducer
        guard (0...recording.actions.count).contains(step) else {
            throw .noSuchStep(step, recorded: recording.actions.count)
        }
        run { [self] in
            commit { core in
                guard let past = recorder.travel(to: step, reducer: reducer) else { return ((), nil) }
                forgetUndoHistory()
                return ((), core.replace(with: past))
            }
        }
    }

    /// Applies every action of `recording` to its initial state with this store's reducer, without running
    /// effects, and makes the result the store's state. The store then holds exactly the state the recorded store
    /// ended in.
    ///
    /// - Throws: ``TimeTravelError/notRecording`` for a scoped store, which has no reducer of its own.
    public func replay(_ recording: Recording<State, Action>) throws(TimeTravelError) {
        guard case .root(let root) = role else { throw .notRecording }
        replaceState(recording.state(afterFirst: recording.actions.count, reducer: root.reducer))
    }
}

/// Why the store could not travel in time or replay.
public enum TimeTravelError: Error, Equatable, CustomStringConvertible {
    /// The store is not recording (call `startRecording()` first), or is a scoped store, which has no reducer.
    case notRecording
    /// The recording has fewer actions than the step asked for.
    case noSuchStep(Int, recorded: Int)

    public var description: String {
        switch self {
        case .notRecording:
            "The store is not recording: call startRecording() first (a scoped store cannot travel; use its root)."
        case .noSuchStep(let step, let recorded):
            "There is no step \(step): the recording has \(recorded) actions, so steps go from 0 to \(recorded)."
        }
    }
}
