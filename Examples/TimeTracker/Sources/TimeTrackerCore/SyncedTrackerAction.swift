import Foundation
import Statehouse

/// An action as a timetrack that follows a server (`--remote`) sends it: what was done, when, by whom, under an id
/// of its own.
///
/// The time is the client's, taken when the user acted, so an activity started offline starts when it was started,
/// not when the server heard of it; and the rules read no clock, so the client's copy and the server's agree. The id
/// lets the server's database recognize an action it applied already (see ``TimeTracker/applySynced(_:)``).
public struct SyncedTrackerAction: Codable, Equatable, Sendable, CustomStringConvertible {
    public var id: String
    public var logged: LoggedAction
    /// Who made it, as the other views show it (``LastChange/origin``).
    public var origin: String

    public init(_ action: TrackerAction, at: Double, origin: String, id: String = UUID().uuidString) {
        self.id = id
        self.logged = LoggedAction(action, at: at)
        self.origin = origin
    }

    public init(_ logged: LoggedAction, origin: String, id: String = UUID().uuidString) {
        self.init(logged.action, at: logged.at, origin: origin, id: id)
    }

    /// The action, as a refusal names it.
    public var description: String {
        String(describing: logged.action)
    }

    /// The reducer a client runs on its copy: ``TrackerRules``, the server's own rules.
    public static let reducer = Reducer<TrackerContents, SyncedTrackerAction> { contents, synced in
        _ = TrackerRules.reducer.reduce(&contents, synced.logged)
    }
}
