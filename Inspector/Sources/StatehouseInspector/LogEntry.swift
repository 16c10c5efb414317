import Foundation

/// One line of a store's log on the page: an action, or a whole replacement of the state, with what it changed.
public struct LogEntry: Sendable, Encodable {
    /// Its place among everything the inspector has sent, rising: the event id that resumes a page's feed.
    public internal(set) var id: UInt64 = 0
    /// Its place in its store's log, from 1: the step time travel shows the state after.
    public let step: Int
    public let date: Date
    /// `action`, or what replaced the state: `undo`, `redo`, `travel`, `storage`.
    public let kind: String
    /// The action's case (its type's name if it has none), or the kind of replacement.
    public let name: String
    /// Who sent the action: `dispatch`, `effect`, `middleware NAME`; empty for a replacement.
    public let source: String
    /// The action as JSON, redacted; `nil` for a replacement.
    public let action: JSONTree?
    /// Only the paths it changed, each with its value before and after, redacted.
    public let changes: [TreeChange]
    /// How many changes of the store the inspector missed right before this one, because it fell that far behind
    /// the store: ``changes`` then covers them too.
    public let missedBefore: Int
}
