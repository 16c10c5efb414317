import Statehouse
import StatehouseSyncWire

/// Everything a ``SyncedStore`` keeps in its outbox, saved as one value so that a crash never separates the state
/// from the actions it holds: the server's state as last seen (`confirmed`, at `cursor`), the actions not yet seen in
/// it (`pending`), and the state the app sees (`local`): `confirmed` with `pending` applied again.
@usableFromInline
struct SyncJournal<State: Codable & Sendable, Action: Codable & Sendable>: Codable, Sendable {
    /// This outbox's name on the server, made once.
    @usableFromInline var client: String
    @usableFromInline var confirmed: State
    @usableFromInline var cursor: Int64
    @usableFromInline var nextSeq: Int64 = 1
    @usableFromInline var pending = ActionLog<Action>()
    @usableFromInline var local: State
    /// The last sequence number a push's answer covered: the pending actions up to it wait only to be seen in the
    /// server's state, and are not pushed again.
    @usableFromInline var answeredThrough: Int64 = 0
    /// Actions seen in the server's state before their push was answered (the feed is faster than the answer, or
    /// the answer was lost). Whether the server refused one of them only the answer says: they are pushed again,
    /// which the server answers without applying them twice, until an answer covers them.
    @usableFromInline var unanswered: [PushedAction<Action>] = []

    @inlinable
    init(client: String, initialState: State) {
        self.client = client
        self.confirmed = initialState
        self.cursor = 0
        self.local = initialState
    }
}

/// What changes a journal: an app's action, or news from the server.
@usableFromInline
enum SyncStep<State: Codable & Sendable, Action: Codable & Sendable>: Sendable {
    case local(Action)
    /// The server's state, from a pull or at the start of a feed. Taken only if its cursor is not behind the
    /// journal's: a pull and a feed are two connections, and either may bring an older state after a newer one.
    case snapshot(StoreSnapshot<State>)
    case change(StoreChange<State>)
    /// A push's answer: its refused actions leave the outbox.
    case pushed(PushAnswer)
}

extension SyncJournal {
    /// The journal's reducer, around the app's: an app's action is applied at once and queued; news from the server
    /// replaces `confirmed`, drops the actions it holds, and applies the rest again (their effects ran already: only
    /// the state changes are kept).
    ///
    /// An app's action that finds `outboxLimit` actions waiting is not applied: the status says so
    /// (``SyncError/outboxFull(limit:)``), rather than the outbox growing without bound or dropping older actions.
    @inlinable
    static func reducer(
        _ app: @escaping @Sendable (inout State, Action) -> Effect<Action>, outboxLimit: Int
    ) -> @Sendable (inout SyncJournal, SyncStep<State, Action>) -> Effect<SyncStep<State, Action>> {
        { journal, step in
            switch step {
            case .local(let action):
                guard journal.pending.count < outboxLimit else { return .none }
                let effect = app(&journal.local, action)
                journal.pending.append(PushedAction(seq: journal.nextSeq, action: action))
                journal.nextSeq += 1
                return effect.isNone ? .none : effect.map { .local($0) }
            case .snapshot(let snapshot):
                guard snapshot.cursor >= journal.cursor else { return .none }
                journal.confirm(snapshot.state, at: snapshot.cursor, handledThrough: snapshot.handledThrough, app)
            case .change(let change):
                guard change.cursor > journal.cursor else { return .none }
                journal.confirm(change.state, at: change.cursor, handledThrough: change.handledThrough ?? 0, app)
            case .pushed(let answer):
                journal.answeredThrough = max(journal.answeredThrough, answer.handledThrough)
                journal.unanswered.removeAll { $0.seq <= answer.handledThrough }
                let refused = Set(answer.refused.map(\.seq))
                guard journal.pending.contains(where: { refused.contains($0.seq) }) else { return .none }
                journal.pending.removeAll { refused.contains($0.seq) }
                journal.rebase(app)
            }
            return .none
        }
    }

    @inlinable
    mutating func confirm(
        _ state: State, at cursor: Int64, handledThrough: Int64, _ app: (inout State, Action) -> Effect<Action>
    ) {
        confirmed = state
        self.cursor = cursor
        let answeredThrough = answeredThrough
        unanswered += pending.filter { $0.seq <= handledThrough && $0.seq > answeredThrough }
        pending.removeAll { $0.seq <= handledThrough }
        rebase(app)
    }

    /// What the server has not answered yet, in order, up to `limit` actions: the actions seen in its state whose
    /// answer never came, then those it has not handled (which follow those it answered, at the log's start).
    func unpushed(upTo limit: Int) -> [PushedAction<Action>] {
        let answeredThrough = answeredThrough
        let fresh = pending.lazy.filter { $0.seq > answeredThrough }.prefix(max(0, limit - unanswered.count))
        return Array(unanswered.prefix(limit)) + fresh
    }

    @inlinable
    mutating func rebase(_ app: (inout State, Action) -> Effect<Action>) {
        var state = confirmed
        for queued in pending { _ = app(&state, queued.action) }
        local = state
    }
}
