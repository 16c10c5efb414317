import Foundation
import Statehouse
import StatehouseInspector
import StatehouseTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

struct Todo: Codable, Sendable, Equatable {
    var title: String
    var done = false
}

struct Notes: Codable, Sendable, Equatable {
    var todos: [Todo] = []
    var password = "initial-secret"
    var count = 0
}

enum NotesAction: Codable, Sendable, Equatable {
    case add(String)
    case toggle(Int)
    case setPassword(String)
    case count
}

func reduceNotes(_ state: inout Notes, _ action: NotesAction) {
    switch action {
    case .add(let title): state.todos.append(Todo(title: title))
    case .toggle(let index) where state.todos.indices.contains(index): state.todos[index].done.toggle()
    case .toggle: break
    case .setPassword(let password): state.password = password
    case .count: state.count += 1
    }
}

/// An answer from the inspector: its status, headers and body.
struct Answer: Sendable {
    let status: Int
    let headers: [String: String]
    let body: Data

    var text: String { String(decoding: body, as: UTF8.self) }

    func json() throws -> Any {
        try JSONSerialization.jsonObject(with: body)
    }
}

extension Inspector {
    /// `method path` on the inspector's own URL (the token included), as its page would send it.
    func request(_ path: String, method: String = "GET", body: Data? = nil, type: String = "application/json") async throws -> Answer {
        var request = URLRequest(url: path.isEmpty ? url : URL(string: path, relativeTo: url)!)
        request.httpMethod = method
        if let body {
            request.httpBody = body
            request.setValue(type, forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = response as! HTTPURLResponse
        var headers: [String: String] = [:]
        for (key, value) in http.allHeaderFields { headers[String(describing: key).lowercased()] = String(describing: value) }
        return Answer(status: http.statusCode, headers: headers, body: data)
    }

    /// The store's log, as the page loads it.
    func log(of store: String) async throws -> [[String: Any]] {
        let detail = try await request("api/stores/\(store)").json() as! [String: Any]
        return detail["entries"] as! [[String: Any]]
    }

    var port: Int { url.port! }
    var token: String { url.pathComponents[1] }
}

/// Sends `request` to `port` on a connection of its own, and returns what arrives until `enough` says so; off the
/// cooperative pool, whose threads the server's handlers need.
func exchange(port: Int, _ request: String, until enough: @escaping @Sendable (String) -> Bool) async throws -> String {
    try await offThePool { () throws -> String in
        let connection = try RawConnection(port: port)
        connection.send(request)
        return connection.receive(until: enough)
    }
}

/// Runs `body` with an inspector started for it, stopped even when `body` throws.
func withInspector<Result>(
    capacity: Int = 10_000, bufferPerPage: Int = 10_000, _ body: (Inspector) async throws -> Result
) async throws -> Result {
    let inspector = try await Inspector.start(capacity: capacity, bufferPerPage: bufferPerPage)
    do {
        let result = try await body(inspector)
        await inspector.stop()
        return result
    } catch {
        await inspector.stop()
        throw error
    }
}
