import Foundation
import StatehouseServer
import StatehouseSyncWire
import SyncFixtures

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
    func request(
        _ method: String, _ path: String, token: String? = Fixture.writer, body: Data? = nil, headers: [String: String] = [:]
    ) async throws -> Exchange {
        var request = URLRequest(url: URL(string: path, relativeTo: url)!)
        request.httpMethod = method
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
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
