import Foundation
import Statehouse

/// An action as a timetrack that follows a server (`--remote`) sends it: what was done, when, by whom, under an id
/// of its own.
///
/// The time is the client's, taken when the user acted, so an activity started offline starts when it was started,
/// not when the server heard of it; and the rules read no clock, so the client's copy and the server's agree. The id
/// lets the server's database recognize an action it applied already (see ``TimeTracker/applySynced(_:)``). Its ids
/// of rows are resolved where it is applied (``TrackerReferences``).
public struct SyncedTrackerAction: Codable, Equatable, Sendable, CustomStringConvertible {
    public var id: String
    public var logged: LoggedAction
    /// Who made it, as the other views show it (``LastChange/origin``).
    public var origin: String
    /// What its ids meant where it was made: where it is applied, they are resolved by these.
    public var references: TrackerReferences

    /// - Parameter contents: The contents the action was applied to where it was made: its ids are theirs.
    public init(_ logged: LoggedAction, madeOn contents: TrackerContents, origin: String, id: String = UUID().uuidString) {
        self.id = id
        self.logged = logged
        self.origin = origin
        self.references = TrackerReferences(of: logged.action, in: contents)
    }

    /// The action, as a refusal names it.
    public var description: String {
        String(describing: logged.action)
    }

    /// The reducer a client runs on its copy: ``TrackerRules``, the server's own rules, on the action resolved in the
    /// contents it is applied to. One the server will refuse changes nothing here either.
    public static let reducer = Reducer<TrackerContents, SyncedTrackerAction> { contents, synced in
        guard let action = try? synced.resolved(in: contents) else { return }
        _ = TrackerRules.reducer.reduce(&contents, LoggedAction(action, at: synced.logged.at))
    }
}
