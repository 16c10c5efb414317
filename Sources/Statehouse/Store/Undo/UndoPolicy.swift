/// Which of a store's actions can be undone, how they are grouped, and how much the store remembers.
///
/// ```swift
/// let store = Store(initialState: Doc(), reducer: docReducer, undo: UndoPolicy(limit: 100) { $0.isUndoable })
/// store.dispatch(.delete("Writing"))
/// store.undoName   // "Delete Writing", when `name:` calls it that
/// store.undo()
/// ```
///
/// Undo is selective: undoing a group takes its actions out and applies every later action again, in order, to
/// the state before the group; see <doc:UndoAndRedo>. So the reducer must be pure: given the same state and action,
/// it makes the same change (a date or an id belongs in the action, not read by the reducer), and it does nothing
/// else, such as dispatching (return an effect instead: effects do not run again).
public struct UndoPolicy<Action: Sendable>: Sendable {
    /// How many groups the store can undo; the oldest is forgotten past it.
    public let limit: Int
    public let grouping: UndoGrouping
    /// How many actions the store keeps to apply again, counting from its oldest group: past it, the oldest groups
    /// are forgotten. It bounds the memory and the time one undo takes when many actions follow a group.
    public let historyLimit: Int
    /// What a user would call an action, for a menu: "Delete Writing" gives "Undo Delete Writing".
    public let name: (@Sendable (Action) -> String?)?
    public let isUndoable: @Sendable (Action) -> Bool

    /// - Parameters:
    ///   - limit: How many groups the store can undo (0 undoes nothing).
    ///   - grouping: How undoable actions make groups: one each (the default), or those close in time.
    ///   - historyLimit: How many actions the store keeps to apply again after an undo (at least 1).
    ///   - name: What a user would call an action; a group is named after its first named action.
    ///   - isUndoable: Whether undo takes an action back. The others (what the server sent, a timer's tick) are
    ///     never undone, and stay applied when an earlier action is undone.
    public init(
        limit: Int = 100,
        grouping: UndoGrouping = .eachAction,
        historyLimit: Int = 10_000,
        name: (@Sendable (Action) -> String?)? = nil,
        isUndoable: @escaping @Sendable (Action) -> Bool
    ) {
        precondition(limit >= 0, "an undo limit is a number of groups, 0 or more")
        precondition(historyLimit >= 1, "an undo history keeps at least the action it undoes")
        self.limit = limit
        self.grouping = grouping
        self.historyLimit = historyLimit
        self.name = name
        self.isUndoable = isUndoable
    }
}

/// How undoable actions make the groups that one ``Store/undo()`` takes back. Whatever the grouping,
/// ``Store/undoGroup(_:_:)`` makes one group of the actions a body dispatches (a gesture that sends several).
public enum UndoGrouping: Sendable, Equatable {
    /// Each undoable action is a group of its own.
    case eachAction
    /// An undoable action joins the newest group if it comes less than this after the group's last action (typing).
    case window(Duration)
}

/// What a menu needs: whether undo and redo can be done, and the names of what they would take back or redo.
public struct UndoAvailability: Sendable, Equatable {
    public var canUndo: Bool
    public var canRedo: Bool
    /// The name of the group ``Store/undo()`` would take back, if its policy names it.
    public var undoName: String?
    /// The name of the group ``Store/redo()`` would apply again, if its policy names it.
    public var redoName: String?

    public init(canUndo: Bool = false, canRedo: Bool = false, undoName: String? = nil, redoName: String? = nil) {
        self.canUndo = canUndo
        self.canRedo = canRedo
        self.undoName = undoName
        self.redoName = redoName
    }
}
