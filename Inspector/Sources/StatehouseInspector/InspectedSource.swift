import Foundation

/// A store's log as the page lists it.
struct StoreSummary: Sendable, Encodable {
    let name: String
    /// The last step logged.
    let steps: Int
    /// How many steps the ring no longer holds.
    let dropped: Int
    /// Whether the page may move the store to a past state.
    let canJump: Bool
    /// Whether the store shows a state the page jumped to.
    let jumped: Bool
    /// Whether a recording can be imported, replayed by the store's reducer.
    let canImport: Bool
    /// For an imported recording: the store whose reducer replayed it.
    let replayOf: String?
    /// What the page says of the store, if anything: why its log stays empty.
    var note: String? = nil
}

/// A store's log in full, as the page loads it before following the feed.
struct StoreDetail: Sendable, Encodable {
    let summary: StoreSummary
    let entries: [LogEntry]
    /// The state after the last entry.
    let state: JSONTree
    /// The id of the last event published when this was read: the page follows the feed from there.
    var lastEventID: UInt64 = 0
}

/// What the routes need of an attached store, whatever its types.
protocol InspectedSource: AnyObject, Sendable {
    var name: String { get }
    var summary: StoreSummary { get }
    var detail: StoreDetail { get }
    func tree(afterStep step: Int) -> JSONTree?
    func entries(after id: UInt64) -> [LogEntry]
    func jump(toStep step: Int) throws(InspectorError)
    func resume() throws(InspectorError)
    /// The logged actions as the store's JSON-lines recording, and how many of the first steps the log dropped.
    func exportedRecording() -> (lines: Data, dropped: Int)
    /// A recording replayed by the store's reducer from the state the store had when it was attached, as a log of
    /// its own named `name`.
    func replay(_ lines: Data, as name: String) throws(InspectorError) -> any InspectedSource
    /// Stops following the store.
    func detach()
}

/// Why the inspector refused a request, as the page shows it.
public struct InspectorError: Error, Sendable, CustomStringConvertible {
    enum Kind: Sendable {
        case notFound, refused, badInput
    }

    let kind: Kind
    public let description: String

    static func notFound(_ message: String) -> Self { Self(kind: .notFound, description: message) }
    static func refused(_ message: String) -> Self { Self(kind: .refused, description: message) }
    static func badInput(_ message: String) -> Self { Self(kind: .badInput, description: message) }
}
