import Foundation
import Statehouse
import NIOConcurrencyHelpers
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
    private let log: NIOLockedValueBox<StoreLog<State>>
    /// The state the store had before the page first jumped, which ``resume()`` puts back.
    private let live = NIOLockedValueBox<State?>(nil)
    private let intake: Intake<StoreEvent<State, Action>>
    private let storeTap: StoreTap
    private let capacity: Int
    private let isScoped: Bool
    /// Set by ``detach()`` under the hub's lock, and read under it before each publication: once `detach` returns,
    /// nothing more is published under this store's name, though the worker may be finishing a batch.
    private let detached = Atomic<Bool>(false)

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
        self.capacity = capacity
        isScoped = store.isScoped
        attachedState = state
        log = NIOLockedValueBox(StoreLog<State>(capacity: capacity, initial: description.state(state)))
        // A thread of its own, not a task: encoding a large state can take long, and a task doing it would hold
        // one of the few threads of Swift's cooperative pool, which the app's own tasks (and the page's requests)
        // need.
        let worker = Thread { [weak self, intake] in
            while true {
                // `self` is held only while there is work, so that a store let go is not kept by its worker.
                guard let worked = self?.logPending() else { return }
                if !worked, !intake.waitForMore() { return }
            }
        }
        worker.name = "Inspector: \(name)"
        worker.start()
    }

    deinit {
        intake.close()
    }

    /// Turns what the intake holds into log entries, and publishes them; once it is empty, the last event dropped,
    /// if no event followed it. Returns whether there was anything.
    private func logPending() -> Bool {
        var pending = intake.takeAll()
        if pending.isEmpty, let last = intake.takeLastDropped() { pending = [last] }
        var previous = log.withLockedValue { $0.latest }
        for (event, missed) in pending {
            // Detached: what is left of the batch is not wanted (nor published: see below).
            if detached.load(ordering: .relaxed) { break }
            let tree = description.state(event.state)
            let changes = previous.changes(to: tree)
            previous = tree
            hub.publish { id in
                guard !detached.load(ordering: .relaxed) else { return nil }
                return log.withLockedValue { log in
                    let entry = Self.entry(
                        for: event, id: id, step: log.lastStep + 1, changes: changes,
                        missedBefore: missed, description: description
                    )
                    log.append(entry, leading: tree, state: canJump ? event.state : nil)
                    return .entry(store: name, entry)
                }
            }
        }
        return !pending.isEmpty
    }

    private static func entry(
        for event: StoreEvent<State, Action>, id: UInt64, step: Int, changes: [TreeChange], missedBefore: Int,
        description: StoreDescription<State, Action>
    ) -> LogEntry {
        switch event.kind {
        case .action(let action, let source):
            description.entry(
                for: action, from: source, id: id, step: step, date: event.date, changes: changes,
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
        log.withLockedValue { summary(of: $0) }
    }

    private func summary(of log: StoreLog<State>) -> StoreSummary {
        StoreSummary(
            name: name, steps: log.lastStep, dropped: log.droppedSteps, canJump: canJump,
            jumped: live.withLockedValue { $0 != nil }, canImport: description.recordedActions != nil, replayOf: nil,
            note: isScoped
                ? "A scoped store: its root applies its actions, and only the root's log shows them. Attach the root."
                : nil
        )
    }

    var detail: StoreDetail {
        log.withLockedValue { log in StoreDetail(summary: summary(of: log), entries: log.entries, state: log.latest) }
    }

    func tree(afterStep step: Int) -> JSONTree? {
        log.withLockedValue { $0.tree(afterStep: step) }
    }

    func entries(after id: UInt64) -> [LogEntry] {
        log.withLockedValue { $0.entries(after: id) }
    }

    func jump(toStep step: Int) throws(InspectorError) {
        guard canJump else {
            throw .refused("\(name) does not allow jumps: attach it with allowsJumps: true, and it must not be persisted.")
        }
        guard let store else { throw .notFound("\(name) no longer exists.") }
        let past = log.withLockedValue { log in step == 0 && log.firstStep == 1 ? attachedState : log.state(afterStep: step) }
        guard let past else { throw .notFound("The log of \(name) no longer holds step \(step).") }
        live.withLockedValue { live in
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
        guard let live = live.withLockedValue({ $0.take() }) else { throw .refused("\(name) shows its live state already.") }
        do {
            try store.jump(to: live)
        } catch {
            throw .refused(error.description)
        }
    }

    func exportedRecording() -> (lines: Data, dropped: Int) {
        let (entries, dropped) = log.withLockedValue { ($0.entries, $0.droppedSteps) }
        return (RecordingLines.encode(entries), dropped)
    }

    func replay(_ lines: Data, as replayName: String) throws(InspectorError) -> any InspectedSource {
        guard let read = description.recordedActions else {
            throw .refused("\(name)'s actions are not Decodable: its recordings cannot be read back.")
        }
        guard let store else { throw .notFound("\(name) no longer exists.") }
        let actions = try read(lines)
        do {
            return try ReplayedRecording(
                name: replayName, replayOf: name, store: store, initialState: attachedState, actions: actions,
                capacity: capacity, description: description
            )
        } catch {
            throw .refused(error.description)
        }
    }

    func detach() {
        hub.snapshot { _ in detached.store(true, ordering: .relaxed) }
        storeTap.cancel()
        intake.close()
    }
}
