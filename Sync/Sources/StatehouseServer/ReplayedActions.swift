import Foundation
import StatehouseSyncWire

/// The actions of a batch that the store handled before: the batch was pushed again because its answer was lost.
/// Each is checked against the action handled under its number, since one that differs would otherwise be skipped as
/// a replay, and lost; those refused then are reported again.
package struct ReplayedActions<Action: Codable & Sendable> {
    let pushed: ArraySlice<PushedAction<Action>>
    let handledBefore: Int64

    package init(_ request: PushRequest<Action>, handledBefore: Int64) {
        self.pushed = request.actions.prefix { $0.seq <= handledBefore }
        self.handledBefore = handledBefore
    }

    /// Their sequence numbers; `nil` when the batch holds none.
    package var seqs: ClosedRange<Int64>? {
        guard let first = pushed.first?.seq, let last = pushed.last?.seq else { return nil }
        return first...last
    }

    /// The refusals to report again, given the actions handled under their numbers. One the store no longer knows
    /// is taken as the same.
    ///
    /// - Parameter encoded: The pushed actions' bytes by sequence number, when the caller encoded them already;
    ///   the others are encoded here.
    /// - Throws: ``PushFailure/replayDiffers(seq:handledThrough:)`` for the first that differs from its known one.
    package func refusals(handled: [Int64: HandledAction], encoded: [Int64: Data] = [:]) throws(PushFailure) -> [Refusal] {
        var refusals: [Refusal] = []
        for action in pushed {
            guard let known = handled[action.seq] else { continue }
            let bytes = encoded[action.seq] ?? (try? StoreEvents.encoder.encode(action.action))
            guard Self.isSame(action.action, encoded: bytes, as: known.action) else {
                throw .replayDiffers(seq: action.seq, handledThrough: handledBefore)
            }
            if let reason = known.refusal { refusals.append(Refusal(seq: action.seq, reason: reason)) }
        }
        return refusals
    }

    /// Whether `pushed` (`encoded` to those bytes) is the action the store handled as `known` (its bytes as the
    /// server encoded them): equal values when `Action` is `Equatable`, since a `Set` or a dictionary encodes in an
    /// order that changes from one process to the next, so the same action pushed again after a restart may come in
    /// other bytes; else equal bytes.
    static func isSame(_ pushed: Action, encoded: Data?, as known: Data) -> Bool {
        if let pushed = pushed as? any Equatable, let handled = try? JSONDecoder().decode(Action.self, from: known) {
            return pushed.isEqual(to: handled)
        }
        return encoded == known
    }
}

extension Equatable {
    /// Whether `other` is a value of this type equal to this one.
    fileprivate func isEqual(to other: Any) -> Bool {
        (other as? Self) == self
    }
}
