/// What a store with an ``UndoPolicy`` remembers to undo and redo: the logic, without the locking (see ``UndoLog``).
///
/// Undo is *selective*: undoing a group removes its actions from the store's history and applies every later action
/// again, in order, to the state before the group; the actions of others that came after it (other threads, effects,
/// actions that are not undoable) stay applied. So each group keeps the state before it, and the history keeps every
/// action from the oldest group on. Redo puts the group's actions back where they were, and applies the later ones
/// again: redoing everything gives exactly the state the store had before the first undo.
///
/// Undo and redo are last in, first out: only the newest group that is done can be undone, only the newest undone
/// one redone, and a new undoable action forgets what could be redone. So the groups before the one being undone or
/// redone never change while it exists, and the state it kept before it stays right.
struct UndoHistory<State: Sendable, Action: Sendable>: Sendable {
    struct Group: Sendable {
        let id: UInt64
        var name: String?
        /// The store's state before the group's first action.
        let before: State
        /// Where the group's first action is in the history (counting from the first action ever kept).
        let start: Int
        /// When its last action was applied, for grouping by time; `nil` for a policy that does not, and in a
        /// history stored as part of a state (a time of this process means nothing to another).
        var lastAction: ContinuousClock.Instant? = nil

        private enum CodingKeys: String, CodingKey {
            case id, name, before, start
        }
    }

    struct Entry: Sendable {
        let action: Action
        /// The group of an undoable action; `nil` for the others.
        let group: UInt64?
    }

    /// A group made of the actions a body or a `.group` action applies.
    struct OpenGroup: Sendable, Equatable, Codable {
        var name: String?
        /// How many groups are open inside one another: they are one.
        var depth: Int
        /// The group, once its first undoable action made it.
        var group: UInt64?
        /// The group outgrew the history's limit and was forgotten: its later actions cannot be undone either (a
        /// group undone in part would leave half a gesture applied).
        var forgotten = false
    }

    /// Where an undoable action goes.
    private enum Joining {
        case group(UInt64)
        case newGroup
        /// Into a group that outgrew the history's limit: nowhere, it cannot be undone.
        case forgottenGroup
    }

    private(set) var done: [Group] = []
    /// The undone groups, the next to redo last.
    private(set) var undone: [Group] = []
    private var entries: [Entry] = []
    /// How many entries were dropped from the front of ``entries``: positions count from the first ever kept.
    private var dropped = 0
    private var nextGroup: UInt64 = 0
    /// An explicit group (``Store/undoGroup(_:_:)``, ``UndoableAction/group(_:_:)``) open.
    private var explicit: OpenGroup?
    /// When the last action of a group made by time was applied, if that group outgrew the history's limit and was
    /// forgotten: actions close enough after it belong to it, and cannot be undone either.
    private var forgottenWindowGroup: ContinuousClock.Instant?

    /// What a history stored in a state keeps: no clock readings, which mean nothing to another process.
    private enum CodingKeys: String, CodingKey {
        case done, undone, entries, dropped, nextGroup, explicit
    }

    init() {}

    /// How much the history holds: its groups, done and undone, and the actions it would apply again.
    var footprint: (groups: Int, actions: Int) {
        (done.count + undone.count, entries.count)
    }

    var availability: UndoAvailability {
        UndoAvailability(
            canUndo: !done.isEmpty, canRedo: !undone.isEmpty, undoName: done.last?.name, redoName: undone.last?.name
        )
    }

    /// Whether recording `action` starts a group, which keeps the state before it: the caller copies the state only
    /// then.
    func startsGroup(with action: Action, at now: ContinuousClock.Instant?, policy: UndoPolicy<Action>) -> Bool {
        guard policy.isUndoable(action), case .newGroup = joining(at: now, grouping: policy.grouping) else { return false }
        return true
    }

    /// Notes an action the reducer applied; `before` is the state before it, given when ``startsGroup(with:at:)``
    /// said so.
    mutating func record(
        _ action: Action, before: State?, at now: ContinuousClock.Instant?, policy: UndoPolicy<Action>
    ) {
        guard policy.isUndoable(action) else {
            // Kept only while a group is there to undo: it is applied again when a group before it is undone.
            if !done.isEmpty || !undone.isEmpty { append(Entry(action: action, group: nil), limit: policy.historyLimit) }
            return
        }
        let joining = joining(at: now, grouping: policy.grouping)
        forgetRedo()
        let group: UInt64
        switch joining {
        case .group(let joined):
            group = joined
            done[done.count - 1].lastAction = now
            if done[done.count - 1].name == nil { done[done.count - 1].name = policy.name?(action) }
        case .newGroup:
            guard let before else { preconditionFailure("an action that starts an undo group comes with the state before it") }
            group = nextGroup
            nextGroup &+= 1
            let name = explicit?.name ?? policy.name?(action)
            done.append(Group(id: group, name: name, before: before, start: dropped + entries.count, lastAction: now))
            if explicit != nil { explicit?.group = group }
        case .forgottenGroup:
            if explicit == nil { forgottenWindowGroup = now }
            // Applied for good, as an action that is not undoable: kept only for the groups before it.
            if !done.isEmpty { append(Entry(action: action, group: nil), limit: policy.historyLimit) }
            return
        }
        append(Entry(action: action, group: group), limit: policy.historyLimit)
        while done.count > policy.limit { dropOldestGroup() }
    }

    /// Where an undoable action goes: the open explicit group once it has started, or the newest group if it is
    /// recent enough for the policy's grouping, unless that group was forgotten.
    private func joining(at now: ContinuousClock.Instant?, grouping: UndoGrouping) -> Joining {
        if let explicit {
            if explicit.forgotten { return .forgottenGroup }
            guard let started = explicit.group, done.last?.id == started, undone.isEmpty else { return .newGroup }
            return .group(started)
        }
        guard undone.isEmpty, case .window(let window) = grouping, let now else { return .newGroup }
        if let last = done.last, let lastAction = last.lastAction, now - lastAction < window { return .group(last.id) }
        if done.isEmpty, let forgotten = forgottenWindowGroup, now - forgotten < window { return .forgottenGroup }
        return .newGroup
    }

    private mutating func append(_ entry: Entry, limit: Int) {
        entries.append(entry)
        while entries.count > limit, !done.isEmpty || !undone.isEmpty { dropOldestGroup() }
        if done.isEmpty, undone.isEmpty {
            dropped += entries.count
            entries.removeAll(keepingCapacity: true)
        }
    }

    /// A new undoable action: the undone groups cannot be redone any more, and their actions leave the history.
    private mutating func forgetRedo() {
        guard !undone.isEmpty else { return }
        let forgotten = Set(undone.map(\.id))
        undone.removeAll()
        // Positions of the groups left stay right: they all start before the first undone group's actions.
        guard let first = entries.firstIndex(where: { $0.group.map(forgotten.contains) ?? false }) else { return }
        let kept = entries[first...].filter { entry in entry.group.map { !forgotten.contains($0) } ?? true }
        entries.replaceSubrange(first..., with: kept)
    }

    /// Forgets the oldest group: what is before the next one leaves the history. With nothing done, that is every
    /// undone group: each kept the state with the older ones applied, so none can be redone without them.
    private mutating func dropOldestGroup() {
        if done.isEmpty {
            undone.removeAll()
        } else {
            let oldest = done.removeFirst()
            if explicit?.group == oldest.id {
                explicit?.group = nil
                explicit?.forgotten = true
            }
            // The newest group, which actions close in time may still join.
            if done.isEmpty { forgottenWindowGroup = oldest.lastAction }
        }
        let nextStart = (done.first ?? undone.last)?.start ?? dropped + entries.count
        entries.removeFirst(nextStart - dropped)
        dropped = nextStart
    }

    /// Undoes the newest group that is done: returns what makes the state without it, or `nil` if there is none.
    mutating func undo() -> Replay? {
        guard let group = done.popLast() else { return nil }
        undone.append(group)
        explicit?.group = nil
        return replay(from: group)
    }

    /// Redoes the newest undone group: returns what makes the state with it again, or `nil` if there is none.
    mutating func redo() -> Replay? {
        guard let group = undone.popLast() else { return nil }
        done.append(group)
        return replay(from: group)
    }

    /// The state before `group`, and the actions from it on that are not undone.
    private func replay(from group: Group) -> Replay {
        let skipped = Set(undone.map(\.id))
        let actions = entries[(group.start - dropped)...].lazy
            .filter { entry in entry.group.map { !skipped.contains($0) } ?? true }
            .map(\.action)
        return Replay(before: group.before, actions: Array(actions))
    }

    /// The store's state was replaced whole (time travel, a replay, a state loaded from storage): actions applied
    /// again to a state from before the replacement would bring back what it replaced.
    mutating func forgetAll() {
        dropped += entries.count
        entries.removeAll()
        done.removeAll()
        undone.removeAll()
        explicit?.group = nil
    }

    mutating func openExplicitGroup(named name: String?) {
        if explicit != nil {
            explicit?.depth += 1
        } else {
            explicit = OpenGroup(name: name, depth: 1)
        }
    }

    mutating func closeExplicitGroup() {
        guard var open = explicit else { return }
        open.depth -= 1
        guard open.depth == 0 else { return explicit = open }
        explicit = nil
        // A gesture's group ends with it: an action close in time after it does not join it.
        if let group = open.group, let index = done.lastIndex(where: { $0.id == group }) { done[index].lastAction = nil }
    }

    /// A state kept before a group, and the actions to apply to it again.
    struct Replay: Sendable {
        let before: State
        let actions: [Action]

        func state(with reducer: (inout State, Action) -> Effect<Action>) -> State {
            var state = before
            // Their effects ran when they were first applied; applied again, they only change the state.
            for action in actions { _ = reducer(&state, action) }
            return state
        }
    }
}

extension UndoHistory: Equatable where State: Equatable, Action: Equatable {}
extension UndoHistory.Group: Equatable where State: Equatable {}
extension UndoHistory.Entry: Equatable where Action: Equatable {}
extension UndoHistory: Codable where State: Codable, Action: Codable {}
extension UndoHistory.Group: Codable where State: Codable {}
extension UndoHistory.Entry: Codable where Action: Codable {}
