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
    /// The projects read from the database.
    case loaded(TrackerState)
    /// The database file is no longer at its path (see ``TrackerState/problem``).
    case lostDatabase(TrackerError)
}
