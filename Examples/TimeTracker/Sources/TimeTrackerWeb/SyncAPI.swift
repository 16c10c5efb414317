import Foundation
import Hummingbird
import StatehouseServer

/// `GET /api/sync`: the apps that sync with this tracker (`timetrack --remote`), for the page.
///
/// `{"hosted": false}` when the server hosts no sync (it has no access token); otherwise how many apps ever pushed,
/// how many follow now, and each app's last push, the latest first.
struct SyncAPI {
    struct Answer: Encodable {
        struct Client: Encodable {
            var name: String
            /// Seconds since 1970.
            var lastPush: Double
            var actions: Int64
        }

        var hosted: Bool
        var clients: [Client] = []
        var following = 0
    }

    let host: TrackerSyncHost?

    func register(on group: RouterGroup<BasicRequestContext>) {
        group.get("sync") { _, _ in
            guard let host else { return try APIResponse.json(Answer(hosted: false)) }
            let clients = try await Task.detached { try host.server.clients(of: TrackerSyncHost.storeName) }.value
            return try APIResponse.json(Answer(
                hosted: true,
                clients: clients.map { Answer.Client(name: $0.name, lastPush: $0.lastPush.timeIntervalSince1970, actions: $0.handledThrough) },
                following: host.server.followerCounts[TrackerSyncHost.storeName] ?? 0
            ))
        }
    }
}
