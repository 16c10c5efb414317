import Foundation
import Statehouse
import Synchronization

/// One attached store: its tap feeds an ``Intake``; a task of its own turns what arrives into log entries (trees,
/// redaction, diffs) and publishes them through the ``EventHub``.
///
/// The store is held weakly: attaching a store to the inspector does not keep it alive.
final class InspectedStore<State: Sendable, Action: Sendable>: InspectedSource {
    let name: String
    private weak let store: Store<State, Action>?
    private let description: StoreDescription<State, Action>
    private let hub: EventHub
    /// Whether the page may move the store (it opted in, and the store is not persisted).
    private let canJump: Bool
    /// The state when the store was attached: what an imported recording is replayed from.
    private let attachedState: State
    private let log: Mutex<StoreLog<State>>
    /// The state the store had before the page first jumped, which ``resume()`` puts back.
    private let live = Mutex<State?>(nil)
    private let intake: Intake<StoreEvent<State, Action>>
    private let storeTap: StoreTap
    /// Set once, at the end of `init`: the task needs `self`.
    private let worker = Mutex<Task<Void, Never>?>(nil)

    /// - Parameters:
    ///   - intake: What `storeTap`, already in place, appends to.
    ///   - state: The state when the tap was added.
    init(
        _ store: Store<State, Action>, name: String, description: StoreDescription<State, Action>,
        allowsJumps: Bool, capacity: Int, hub: EventHub,
        intake: Intake<StoreEvent<State, Action>>, storeTap: StoreTap, state: State
    ) {
        self.name = name
        self.store = store
        self.description = description
        self.hub = hub
        canJump = allowsJumps && !store.isPersisted
        self.intake = intake
        self.storeTap = storeTap
        attachedState = state
        log = Mutex(StoreLog<State>(capacity: capacity, initial: description.state(state)))
        let wakes = intake.wakes
        worker.withLock { worker in
            worker = Task.detached { [weak self] in
                var woken = wakes.makeAsyncIterator()
                while let self {
                    logPending()
                    if intake.prepareToSleep(), await woken.next() == nil { return }
                }
            }
        }
    }

    /// Turns what the intake holds into log entries, and publishes them.
    private func logPending() {
        var previous = log.withLock { $0.latest }
        for (event, missed) in intake.takeAll() {
            let tree = description.state(event.state)
            let changes = previous.changes(to: tree)
            previous = tree
            hub.publish { id in
                log.withLock { log in
                    let entry = Self.entry(
                        for: event, id: id, step: log.lastStep + 1, changes: changes,
                        missedBefore: missed, description: description
                    )
                    log.append(entry, leading: tree, state: canJump ? event.state : nil)
                    return .entry(store: name, entry)
                }
            }
        }
    }

    private static func entry(
        for event: StoreEvent<State, Action>, id: UInt64, step: Int, changes: [TreeChange], missedBefore: Int,
        description: StoreDescription<State, Action>
    ) -> LogEntry {
        switch event.kind {
        case .action(let action, let source):
            LogEntry(
                id: id, step: step, date: event.date, kind: "action", name: description.caseName(action),
                source: source.description, action: description.action(action), changes: changes,
                missedBefore: missedBefore
            )
        case .replaced(let replacement):
            LogEntry(
                id: id, step: step, date: event.date, kind: replacement.rawValue, name: replacement.rawValue,
                source: "", action: nil, changes: changes, missedBefore: missedBefore
            )
        }
    }

    var summary: StoreSummary {
        log.withLock { summary(of: $0) }
    }

    private func summary(of log: StoreLog<State>) -> StoreSummary {
        StoreSummary(
            name: name, steps: log.lastStep, dropped: log.droppedSteps, canJump: canJump,
            jumped: live.withLock { $0 != nil }, canImport: description.recordedActions != nil, replayOf: nil
        )
    }

    var detail: StoreDetail {
        log.withLock { log in StoreDetail(summary: summary(of: log), entries: log.entries, state: log.latest) }
    }

    func tree(afterStep step: Int) -> JSONTree? {
        log.withLock { $0.tree(afterStep: step) }
    }

    func entries(after id: UInt64) -> [LogEntry] {
        log.withLock { $0.entries(after: id) }
    }

    func jump(toStep step: Int) throws(InspectorError) {
        guard canJump else {
            throw .refused("\(name) does not allow jumps: attach it with allowsJumps: true, and it must not be persisted.")
        }
        guard let store else { throw .notFound("\(name) no longer exists.") }
        let past = log.withLock { log in step == 0 && log.firstStep == 1 ? attachedState : log.state(afterStep: step) }
        guard let past else { throw .notFound("The log of \(name) no longer holds step \(step).") }
        live.withLock { live in
            if live == nil { live = store.state }
        }
        do {
            try store.jump(to: past)
        } catch {
            throw .refused(error.description)
        }
    }

    func resume() throws(InspectorError) {
        guard let store else { throw .notFound("\(name) no longer exists.") }
        guard let live = live.withLock({ $0.take() }) else { throw .refused("\(name) shows its live state already.") }
        do {
            try store.jump(to: live)
        } catch {
            throw .refused(error.description)
        }
    }

    func exportedRecording() -> (lines: Data, dropped: Int) {
        let (entries, dropped) = log.withLock { ($0.entries, $0.droppedSteps) }
        return (RecordingLines.encode(entries), dropped)
    }

    func replay(_ lines: Data, as replayName: String) throws(InspectorError) -> any InspectedSource {
        guard let read = description.recordedActions else {
            throw .refused("\(name)'s actions are not Decodable: its recordings cannot be read back.")
        }
        guard let store else { throw .notFound("\(name) no longer exists.") }
        let actions = try read(lines)
        let states: [State]
        do {
            states = try store.states(replaying: Recording(initialState: attachedState, actions: actions))
        } catch {
            throw .refused(error.description)
        }
        return ReplayedRecording(
            name: replayName, replayOf: name, actions: actions, states: states, description: description
        )
    }

    func detach() {
        storeTap.cancel()
        intake.close()
        worker.withLock { $0?.cancel() }
    }
}
