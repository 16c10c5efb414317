import Foundation
import StatehouseServer
import StatehouseSyncWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Tokens and servers the tests share.
enum Fixture {
    static let writer = "writer-token-0123456789abcdef"
    static let reader = "reader-token-0123456789abcdef"
    static let other = "other-store-token-0123456789ab"
    static let unknown = "unknown-token-0123456789abcdef"

    static func tokens() throws -> SyncTokens {
        try SyncTokens([
            SyncGrant(name: "writer", token: writer, stores: ["tracker": .readWrite]),
            SyncGrant(name: "reader", token: reader, stores: ["tracker": .read]),
            SyncGrant(name: "other", token: other, stores: ["other": .readWrite]),
        ])
    }

    /// A server hosting `tracker`, whose `authorize` refuses ``TrackerAction/forbidden`` and whose reducer throws on
    /// ``TrackerAction/impossible``.
    static func server(storage: SyncServerStorage? = nil, limits: SyncLimits = SyncLimits()) throws -> SyncServer {
        let server = SyncServer(storage: try storage ?? .inMemory(), tokens: try tokens(), limits: limits)
        server.host(
            store: "tracker", initialState: Tracker(), reducer: serverReducer,
            authorize: { _, action in action == .forbidden ? .refuse("forbidden here") : .allow }
        )
        return server
    }

    static func temporaryFolder() -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("statehouse-sync-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}

/// One HTTP exchange with a running server, as any client would have it.
struct Exchange {
    var status: Int
    var body: Data
    var headers: [String: String]

    func decoded<T: Decodable>(_ type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: body)
    }
}

extension RunningServer {
    func request(_ method: String, _ path: String, token: String? = Fixture.writer, body: Data? = nil) async throws -> Exchange {
        var request = URLRequest(url: URL(string: path, relativeTo: url)!)
        request.httpMethod = method
        request.httpBody = body
        if body != nil { request.setValue("application/json", forHTTPHeaderField: "Content-Type") }
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields { headers["\(name)".lowercased()] = "\(value)" }
        return Exchange(status: http.statusCode, body: data, headers: headers)
    }

    func push(client: String = "client-a", _ actions: [(Int64, TrackerAction)], token: String = Fixture.writer) async throws -> Exchange {
        let body = try JSONEncoder().encode(
            PushRequest(client: client, actions: actions.map { PushedAction(seq: $0.0, action: $0.1) })
        )
        return try await request("POST", "stores/tracker/actions", token: token, body: body)
    }

    func snapshot(client: String = "client-a") async throws -> StoreSnapshot<Tracker> {
        try await request("GET", "stores/tracker?client=\(client)").decoded(StoreSnapshot<Tracker>.self)
    }
}
