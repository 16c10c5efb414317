import Foundation
import Statehouse

/// How the inspector shows one store's states and actions, and reads its recordings back: made by ``Inspector``'s
/// `attach` overloads from the store's types and the redaction asked for.
struct StoreDescription<State: Sendable, Action: Sendable>: Sendable {
    /// The state as a tree, redacted.
    let state: @Sendable (State) -> JSONTree
    /// The action as a tree, redacted.
    let action: @Sendable (Action) -> JSONTree
    let caseName: @Sendable (Action) -> String
    /// Reads a JSON-lines recording's actions; `nil` where `Action` is not `Decodable`.
    let recordedActions: (@Sendable (Data) throws(InspectorError) -> [RecordedAction<Action>])?

    /// The log's entry for `action`, which `source` sent.
    func entry(
        for action: Action, from source: ActionSource, id: UInt64 = 0, step: Int, date: Date, changes: [TreeChange],
        missedBefore: Int = 0
    ) -> LogEntry {
        LogEntry(
            id: id, step: step, date: date, kind: "action", name: caseName(action), source: source.description,
            action: self.action(action), changes: changes, missedBefore: missedBefore
        )
    }

    /// For `Encodable` states and actions: trees of their encodings, with `redaction` applied.
    static func encoding(redacting redaction: InspectorRedaction) -> Self where State: Encodable, Action: Encodable {
        var recordedActions: (@Sendable (Data) throws(InspectorError) -> [RecordedAction<Action>])?
        if Action.self is any Decodable.Type {
            recordedActions = { lines throws(InspectorError) in
                // Cast again here: a metatype existential is not Sendable, and cannot be captured.
                let decodable = Action.self as! any Decodable.Type
                return try readRecording(lines, decodable)
            }
        }
        return Self(
            state: { (state: State) in redaction.apply(to: tree(of: state)) },
            action: { (action: Action) in redaction.apply(to: tree(of: action)) },
            caseName: { (action: Action) in tree(of: action).caseName ?? String(describing: Action.self) },
            recordedActions: recordedActions
        )
    }

    /// For any state and action: the text `ValueRedaction` lets through, or the placeholder.
    static func describing(state: ValueRedaction<State>, actions: ValueRedaction<Action>) -> Self {
        Self(
            state: { state.text(for: $0).map(JSONTree.string) ?? InspectorRedaction.placeholder },
            action: { actions.text(for: $0).map(JSONTree.string) ?? InspectorRedaction.placeholder },
            caseName: caseName(of:),
            recordedActions: nil
        )
    }

    private static func tree(of value: some Encodable) -> JSONTree {
        do {
            return try JSONTree(encoding: value)
        } catch {
            return .string("(cannot be encoded: \(error))")
        }
    }

    /// The enum case `Mirror` names (a case with a payload), else the value's description for a case without one,
    /// else its type's name.
    private static func caseName(of action: Action) -> String {
        let mirror = Mirror(reflecting: action)
        guard mirror.displayStyle == .enum else { return String(describing: Action.self) }
        return mirror.children.first?.label ?? String(describing: action)
    }

    private static func readRecording<Decoded: Decodable>(
        _ lines: Data, _: Decoded.Type
    ) throws(InspectorError) -> [RecordedAction<Action>] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        var actions: [RecordedAction<Action>] = []
        for (number, line) in lines.split(separator: UInt8(ascii: "\n")).enumerated()
        where !line.allSatisfy({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\r") }) {
            do {
                let recorded = try decoder.decode(RecordedLine<Decoded>.self, from: Data(line))
                // Decoded is Action, opened from `any Decodable.Type`.
                guard let action = recorded.action as? Action else { continue }
                actions.append(RecordedAction(date: recorded.date, action: action, sentByEffect: recorded.sentByEffect ?? false))
            } catch {
                throw .badInput("Line \(number + 1) is not one of \(Action.self)'s recorded actions: \(error)")
            }
        }
        return actions
    }

    /// A line of a recording (`RecordedAction`'s encoding), for an action type known here only as `Decodable`.
    private struct RecordedLine<Decoded: Decodable>: Decodable {
        let date: Date
        let action: Decoded
        let sentByEffect: Bool?
    }
}
