import Foundation
import Statehouse
import StatehouseServer
import TimeTrackerCore

/// The tracker, hosted for apps that follow it offline-first (`timetrack --remote URL …`): a `SyncServer` whose
/// store `tracker` is the tracker's own database.
///
/// Each pushed ``SyncedTrackerAction`` is applied to the database by the tracker's rules, which the app ran on its
/// copy first; every change to the database, whoever made it (the page, another command, another app), reaches the
/// apps' feeds. The server's own file (beside the database, owner-only) keeps only each app's sequence numbers: an
/// action pushed twice is applied once, the database's receipts covering a server stopped between the two commits.
public final class TrackerSyncHost: Sendable {
    /// The store's name in the sync routes.
    public static let storeName = "tracker"
    public let server: SyncServer
    private let subscription: SubscriptionToken

    /// - Parameters:
    ///   - storagePath: The sync server's own SQLite file, created owner-only if missing.
    ///   - token: What apps present; the same token as the page's and the API's.
    public init(tracker: TimeTracker, storagePath: String, token: String) throws {
        if !FileManager.default.fileExists(atPath: storagePath) {
            // Made before SQLite opens it: it holds the tracker's contents, and its log and index take its mode.
            _ = FileManager.default.createFile(atPath: storagePath, contents: nil, attributes: [.posixPermissions: 0o600])
        }
        server = SyncServer(
            storage: try .sqlite(path: storagePath),
            tokens: try SyncTokens([
                SyncGrant(name: "timetrack", token: token, stores: [Self.storeName: .readWrite])
            ])
        )
        server.host(
            store: Self.storeName, keptBy: { try tracker.contents() },
            reducer: { (contents: inout TrackerContents, action: SyncedTrackerAction) in
                // An app's time is its own clock's, and the copies name projects by their creation time too
                // (`TrackerReferences`): it is kept, but a change dated far ahead of this server's clock is refused.
                let ahead = action.logged.at - Date().timeIntervalSince1970
                guard ahead <= Self.clockTolerance else { throw ChangeFromTheFuture(seconds: ahead) }
                do {
                    contents = try tracker.applySynced(action)
                } catch let error as TrackerError {
                    switch error {
                    case .databaseLocked, .databaseGone, .database:
                        // The database's trouble, not the action's: the push is answered 503 and comes again.
                        throw SyncUnavailable("The server's database cannot be written now: \(error)")
                    default:
                        throw error
                    }
                }
            }
        )
        // Every change the tracker's store hears of (its own writes and everyone else's) may be one the apps lack.
        subscription = tracker.store.subscribe(initial: false) { [server] _ in server.stateChanged(store: Self.storeName) }
    }

    deinit {
        subscription.cancel()
    }

    /// How far ahead of this server's clock an app's may be: its changes are dated by it.
    static let clockTolerance: Double = 300

    /// Where the sync server's file goes for the database at `databasePath`: beside it.
    public static func storagePath(besides databasePath: String) -> String {
        let url = URL(fileURLWithPath: databasePath)
        return url.deletingPathExtension().path + "-sync.sqlite"
    }
}

/// A change dated ahead of the server's clock by more than ``TrackerSyncHost/clockTolerance``.
struct ChangeFromTheFuture: Error, CustomStringConvertible {
    let seconds: Double

    var description: String {
        "It is dated \(Int(seconds)) seconds ahead of the server's clock: check the clock of the machine it was made on."
    }
}
