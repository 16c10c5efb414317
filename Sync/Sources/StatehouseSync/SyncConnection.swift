import Foundation
import StatehouseSyncWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client's side of the wire protocol for one store: pushes, pulls and the feed.
@usableFromInline
struct SyncConnection: Sendable {
    let http: SyncHTTP
    let store: String

    @usableFromInline
    init(server: URL, store: String, token: String) {
        self.http = SyncHTTP(server: server, token: token)
        self.store = store
    }

    private var storeURL: URL {
        http.server.appendingPathComponent("stores").appendingPathComponent(store)
    }

    func push<Action: Codable & Sendable>(client: String, _ batch: OutboxBatch<Action>) async throws(SyncError) -> PushAnswer {
        var request = URLRequest(url: storeURL.appendingPathComponent("actions"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.httpBody = batch.body(client: client)
        return try await send(request, as: PushAnswer.self)
    }

    func pull<State: Codable & Sendable>(client: String, as type: State.Type) async throws(SyncError) -> StoreSnapshot<State> {
        try await send(URLRequest(url: url(storeURL, client: client)), as: StoreSnapshot<State>.self)
    }

    /// The store's feed, from just after `lastEventID`. Ends when the server ends it; throws when it fails.
    func feed(client: String, after lastEventID: Int64?) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        http.feed(url(storeURL.appendingPathComponent("events"), client: client), after: lastEventID)
    }

    private func url(_ base: URL, client: String) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "client", value: client)]
        return components.url!
    }

    private func send<Answer: Decodable>(_ request: URLRequest, as type: Answer.Type) async throws(SyncError) -> Answer {
        let (data, response, failure) = await http.exchange(request)
        if let failure { throw .unreachable(failure.localizedDescription) }
        let status = response?.statusCode ?? 0
        guard status == 200 else { throw SyncHTTP.failure(status: status, body: data) }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw .unreachable("The server's answer is not the protocol's: \(error)")
        }
    }
}
