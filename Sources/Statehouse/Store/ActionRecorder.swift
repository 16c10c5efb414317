import Foundation
import Synchronization

/// Records a store's actions while asked to, where time travel has taken the store, and hands what the store does to
/// its taps (see ``Store/tap(_:)``).
@usableFromInline
final class ActionRecorder<State: Sendable, Action: Sendable>: Sendable {
    private struct Session: Sendable {
        var recording: Recording<State, Action>
        /// Set while the store shows the state after this many actions instead of the latest.
        var travelled: Int?
    }

    /// ``recordingBit`` while recording, ``tappedBit`` while tapped: one load tells an action that nobody watches.
    @usableFromInline let flag = Atomic<UInt8>(0)
    @usableFromInline static var recordingBit: UInt8 { 1 }
    @usableFromInline static var tappedBit: UInt8 { 2 }
    /// Where the action being applied came from, kept while someone watches, as an index into ``sources``: one
    /// atomic load on every action a tap sees. Only the store's worker, one at a time, sets and reads it; atomic
    /// because the worker may be another thread from one turn to the next.
    @usableFromInline let sourceIndex = Atomic<Int>(0)
    /// The sources seen so far: `dispatch` and `effect`, then each named middleware once.
    @usableFromInline let sources = Locked<[ActionSource]>([.dispatch, .effect])
    private let session = Locked<Session?>(nil)
    /// Under the store's state lock (see ``StoreTaps``).
    @usableFromInline let taps = StoreTaps<State, Action>()

    @usableFromInline init() {}

    /// Whether actions are being recorded; cheap enough to ask on every dispatch.
    @inlinable
    var isRecording: Bool { flag.load(ordering: .relaxed) & Self.recordingBit != 0 }

    /// Whether the store is recorded or tapped; cheap enough to ask on every dispatch.
    @inlinable
    var isWatched: Bool { flag.load(ordering: .relaxed) != 0 }

    /// Runs `route`, the route of an action from `source`, noting where it came from for the recording and the taps.
    @inlinable
    func applying(from source: ActionSource, _ route: () -> Void) {
        guard isWatched else { return route() }
        let outer = setSource(source)
        defer { sourceIndex.store(outer, ordering: .relaxed) }
        route()
    }

    /// Makes `newSource` the current source; returns the index of the one it replaces.
    @usableFromInline
    func setSource(_ newSource: ActionSource) -> Int {
        let index: Int = switch newSource {
        case .dispatch: 0
        case .effect: 1
        case .middleware:
            sources.withLock { sources in
                if let index = sources.firstIndex(of: newSource) { return index }
                sources.append(newSource)
                return sources.count - 1
            }
        }
        return sourceIndex.exchange(index, ordering: .relaxed)
    }

    @inlinable
    var currentSource: ActionSource {
        let index = sourceIndex.load(ordering: .relaxed)
        switch index {
        case 0: return .dispatch
        case 1: return .effect
        default: return sources.withLock { $0[index] }
        }
    }

    /// Notes that the store applied `action`, leaving `state`: records it, and hands it to the taps. Called under
    /// the store's state lock, so that a recording or a tap started meanwhile starts from a state that does or does
    /// not include the action, and sees it accordingly. Inlinable, so that it runs specialized for the store's
    /// types: unspecialized, making the event alone cost several times a whole `dispatch`.
    @inlinable
    func applied(_ action: Action, leaving state: State) {
        let source = currentSource
        if isRecording { record(action, sentByEffect: source == .effect) }
        if flag.load(ordering: .relaxed) & Self.tappedBit != 0 {
            tell(StoreEvent(kind: .action(action, source: source), date: coarseNow(), state: state))
        }
    }

    /// Hands a whole replacement of the state to the taps; called under the store's state lock, as ``applied``.
    @inlinable
    func replaced(_ replacement: StateReplacement, with state: State) {
        guard flag.load(ordering: .relaxed) & Self.tappedBit != 0 else { return }
        tell(StoreEvent(kind: .replaced(replacement), date: coarseNow(), state: state))
    }

    /// Called under the store's state lock, which guards the taps.
    @inlinable
    func tell(_ event: StoreEvent<State, Action>) {
        for entry in taps.all { entry.tap(event) }
    }

    /// Called under the store's state lock, which guards the taps.
    func addTap(_ tap: @escaping StoreTaps<State, Action>.Tap) -> UInt64 {
        flag.bitwiseOr(Self.tappedBit, ordering: .relaxed)
        return taps.add(tap)
    }

    /// Called under the store's state lock, which guards the taps.
    func removeTap(_ id: UInt64) {
        taps.remove(id)
        if taps.all.isEmpty { flag.bitwiseAnd(~Self.tappedBit, ordering: .relaxed) }
    }

    func start(from state: State) {
        session.withLock { $0 = Session(recording: Recording(initialState: state)) }
        flag.bitwiseOr(Self.recordingBit, ordering: .relaxed)
    }

    func stop() -> Recording<State, Action>? {
        flag.bitwiseAnd(~Self.recordingBit, ordering: .relaxed)
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
                recorder.replaced(.travel, with: past)
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
    /// The store writes its state to a storage: a state shown for debugging would be written, and other processes
    /// would take it.
    case persisted

    public var description: String {
        switch self {
        case .notRecording:
            "The store is not recording: call startRecording() first (a scoped store cannot travel; use its root)."
        case .noSuchStep(let step, let recorded):
            "There is no step \(step): the recording has \(recorded) actions, so steps go from 0 to \(recorded)."
        case .persisted:
            "The store writes its state to a storage: jumping would store the state shown. Jump in an in-memory store."
        }
    }
}
