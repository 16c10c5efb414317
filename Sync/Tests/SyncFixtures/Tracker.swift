import Foundation
import Statehouse

/// The store the tests and their helper processes sync: a list of entries and a running total.
public struct Tracker: Codable, Sendable, Equatable {
    public var entries: [String] = []
    public var total = 0

    public init(entries: [String] = [], total: Int = 0) {
        self.entries = entries
        self.total = total
    }
}

public enum TrackerAction: Codable, Sendable, Equatable {
    case add(String)
    case count(Int)
    /// Adds each entry once, in their sorted order. A `Set` encodes its elements in an order that changes from one
    /// process to the next.
    case addAll(Set<String>)
    /// The server's `authorize` hook refuses it.
    case forbidden
    /// The server's reducer throws on it; the app's applies nothing.
    case impossible
}

public struct Impossible: Error, CustomStringConvertible {
    public var description: String { "impossible" }
}

/// The reducer both sides run. The server's throws where the app's ignores (see ``serverReducer``).
public let trackerReducer: @Sendable (inout Tracker, TrackerAction) -> Void = { state, action in
    switch action {
    case .add(let entry): state.entries.append(entry)
    case .count(let n): state.total += n
    case .addAll(let entries): state.entries += entries.sorted()
    case .forbidden, .impossible: break
    }
}

public let serverReducer: @Sendable (inout Tracker, TrackerAction) throws -> Void = { state, action in
    if case .impossible = action {
        state.entries.append("half-applied")
        throw Impossible()
    }
    trackerReducer(&state, action)
}

/// A tracker whose entries can be undone, and whose counts cannot: the same reducer on the clients and the server,
/// undo and redo among the actions they sync.
public let notesReducer = Reducer(trackerReducer).undoable(UndoPolicy { action in
    if case .count = action { false } else { true }
})
