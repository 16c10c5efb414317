import Foundation

/// Something a ``ReplicatedStore`` noticed that is not the error of a call: a reducer that is not deterministic, an
/// action that could not be appended.
///
/// A store reports them to the `onIssue` handler it was created with; by default they are written to standard
/// error.
public struct ReplicationIssue: Sendable, Equatable, CustomStringConvertible {
    /// What went wrong, to match on.
    public enum Kind: Sendable, Equatable {
        /// With `verifyDeterminism`, the reducer applied to the same state and action twice gave two different
        /// states: it reads a clock, random numbers or something outside the state, and the stores of different
        /// processes will drift apart.
        case nondeterministicReducer
        /// The database refused to append actions dispatched here (not a lost connection, which is retried): they
        /// were applied nowhere.
        case actionNotAppended
        /// Actions dispatched here were sent to the log, their answer was lost, and whether they were appended cannot
        /// be read for a reason reconnecting does not mend (a table changed by hand, a privilege revoked): they stay
        /// queued, holding back the actions dispatched after them, and are looked up again until the log answers.
        /// Said once until it does. (Failing them would say they were applied nowhere, which may be false.)
        case actionOutcomeUnknown
        /// An action dispatched here could not be encoded: it was applied nowhere.
        case unencodableAction
        /// The log could not be read for a reason reconnecting does not mend (its tables changed by hand, a
        /// privilege revoked, the `PostgresClient` shut down): the store keeps its state and tries again every 2 s.
        /// Said once until the log can be read again; lost connections are retried without a word.
        case logUnreadable
        /// The newest snapshot could not be decoded (the state's type changed?): the store replays the whole log
        /// from its initial state instead.
        case unusableSnapshot
    }

    public let kind: Kind
    /// The log's sequence number of the action concerned, when there is one.
    public let sequence: Int64?
    /// What happened and what to do about it. Never holds a state or an action.
    public let message: String

    public var description: String { message }

    /// Writes the issue's message to standard error: the default handler.
    public static let standardError: @Sendable (ReplicationIssue) -> Void = { issue in
        FileHandle.standardError.write(Data(("StatehousePostgres: " + issue.message + "\n").utf8))
    }
}
