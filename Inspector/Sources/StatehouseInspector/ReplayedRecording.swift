import Foundation
import Statehouse

/// An imported recording, replayed by a store's reducer from the state the store had when it was attached: a log of
/// its own, which the page shows like a store's, but which nothing changes.
final class ReplayedRecording<State: Sendable, Action: Sendable>: InspectedSource {
    let name: String
    private let replayOf: String
    private let log: StoreLog<State>

    /// Replays `actions` with `store`'s reducer from `initialState`. Only the last `capacity` steps are kept, as in a
    /// store's log: the states before them are reduced, not encoded, so that a long recording costs the encoding of
    /// `capacity` states, not of all of them.
    init(
        name: String, replayOf: String, store: Store<State, Action>, initialState: State,
        actions: [RecordedAction<Action>], capacity: Int, description: StoreDescription<State, Action>
    ) throws(TimeTravelError) {
        self.name = name
        self.replayOf = replayOf
        let firstKept = max(actions.count - capacity, 0)
        var log: StoreLog<State>?
        var previous = JSONTree.null
        try store.forEachState(replaying: Recording(initialState: initialState, actions: actions)) { step, state in
            guard step >= firstKept else { return }
            let tree = description.state(state)
            defer { previous = tree }
            guard var kept = log else {
                log = StoreLog(capacity: max(capacity, 1), initial: tree, after: step)
                return
            }
            let recorded = actions[step - 1]
            kept.append(
                description.entry(
                    for: recorded.action, from: recorded.sentByEffect ? .effect : .dispatch, step: step,
                    date: recorded.date, changes: previous.changes(to: tree)
                ),
                leading: tree, state: nil
            )
            log = kept
        }
        self.log = log ?? StoreLog(capacity: 1, initial: description.state(initialState))
    }

    var summary: StoreSummary {
        StoreSummary(
            name: name, steps: log.lastStep, dropped: log.droppedSteps, canJump: false, jumped: false, canImport: false,
            replayOf: replayOf
        )
    }

    var detail: StoreDetail {
        StoreDetail(summary: summary, entries: log.entries, state: log.latest)
    }

    func tree(afterStep step: Int) -> JSONTree? {
        log.tree(afterStep: step)
    }

    func entries(after id: UInt64) -> [LogEntry] { [] }

    func jump(toStep step: Int) throws(InspectorError) {
        throw .refused("\(name) is a replayed recording: there is no store to move.")
    }

    func resume() throws(InspectorError) {
        throw .refused("\(name) is a replayed recording: there is no store to move.")
    }

    func exportedRecording() -> (lines: Data, dropped: Int) {
        (RecordingLines.encode(log.entries), 0)
    }

    func replay(_ lines: Data, as name: String) throws(InspectorError) -> any InspectedSource {
        throw .refused("Import into \(replayOf), the store this recording was replayed by.")
    }

    func detach() {}
}

/// A log's actions as a store's JSON-lines recording (`Recording.writeActions(to:)`'s format, which
/// `Recording(initialState:contentsOf:)` reads): `{"action": …, "date": …}`, with `"sentByEffect": true` for an
/// action an effect sent. Replacements of the state are not actions and are left out.
enum RecordingLines {
    private struct Line: Encodable {
        let action: JSONTree
        let date: Date
        let sentByEffect: Bool?
    }

    static func encode(_ entries: [LogEntry]) -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .iso8601
        var data = Data()
        for entry in entries where entry.kind == "action" {
            guard let action = entry.action,
                  let line = try? encoder.encode(Line(action: action, date: entry.date, sentByEffect: entry.source == ActionSource.effect.description ? true : nil))
            else { continue }
            data.append(line)
            data.append(UInt8(ascii: "\n"))
        }
        return data
    }
}
