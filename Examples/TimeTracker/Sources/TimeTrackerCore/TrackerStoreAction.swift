/// What the tracker's ``Statehouse/Store`` receives.
///
/// The state never changes because of a user's action directly: the action is applied to the database, and the state
/// is read back from it — after our own writes and after anyone else's — which keeps every view in agreement with
/// the database, whoever wrote it.
public enum TrackerStoreAction: Sendable {
    /// A user's action to apply to the database; `reply` learns how it went.
    case perform(TrackerAction, reply: ActionReply)
    /// The database changed (here or in another process): read it again.
    case refresh
    /// The projects read from the database; `answering` is the reply of the action whose write they show, answered
    /// once they are the state, so that `perform` returns when the state shows its own write.
    case loaded(TrackerState, answering: PendingAnswer? = nil)
    /// The database file is no longer at its path (see ``TrackerState/problem``).
    case lostDatabase(TrackerError)
}

/// A reply held until the projects read after its action's write are the tracker's state.
public struct PendingAnswer: Sendable {
    let reply: ActionReply
    let outcome: ActionReply.Outcome

    func send() {
        reply.answer(outcome)
    }
}
