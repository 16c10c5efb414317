import Dispatch
import Foundation
import StatehouseSyncWire
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The client's side of the wire protocol, on Foundation's `URLSession` (FoundationNetworking on Linux): pushes,
/// pulls and the feed of one store.
struct SyncConnection: Sendable {
    let server: URL
    let store: String
    let token: String
    let session: URLSession

    init(server: URL, store: String, token: String) {
        self.server = server
        self.store = store
        self.token = token
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        self.session = URLSession(configuration: configuration)
    }

    private var storeURL: URL {
        server.appendingPathComponent("stores").appendingPathComponent(store)
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
        var request = URLRequest(url: url(storeURL.appendingPathComponent("events"), client: client))
        authorize(&request)
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let lastEventID { request.setValue(String(lastEventID), forHTTPHeaderField: "Last-Event-ID") }
        // The server's heartbeat comes every 15 s: a minute of silence means the connection is gone.
        request.timeoutInterval = 60
        return EventStreamTask.start(request)
    }

    private func url(_ base: URL, client: String) -> URL {
        var components = URLComponents(url: base, resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "client", value: client)]
        return components.url!
    }

    private func authorize(_ request: inout URLRequest) {
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
    }

    private func send<Answer: Decodable>(_ request: URLRequest, as type: Answer.Type) async throws(SyncError) -> Answer {
        var request = request
        authorize(&request)
        let (data, response, failure) = await exchange(request)
        if let failure { throw .unreachable(failure.localizedDescription) }
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        guard status == 200 else { throw Self.failure(status: status, body: data) }
        do {
            return try JSONDecoder().decode(Answer.self, from: data)
        } catch {
            throw .unreachable("The server's answer is not the protocol's: \(error)")
        }
    }

    /// The request's answer, through a completion handler rather than `URLSession.data(for:)`: with
    /// FoundationNetworking, cancelling the task that awaits `data(for:)` cancels the request under the task's
    /// cancellation lock, while the session's queue, finishing the same request, waits for that lock to resume it:
    /// a deadlock (seen when a synced store stopped mid-push). Not cancelled, a request ends by itself, within its
    /// timeout.
    private func exchange(_ request: URLRequest) async -> (Data, URLResponse?, (any Error)?) {
        await withCheckedContinuation { continuation in
            session.dataTask(with: request) { data, response, error in
                continuation.resume(returning: (data ?? Data(), response, error))
            }.resume()
        }
    }

    /// A 5xx is the server's passing trouble; a 4xx is an answer that the same request will get again.
    static func failure(status: Int, body: Data) -> SyncError {
        let message = (try? JSONDecoder().decode(ErrorAnswer.self, from: body))?.error
            ?? String(decoding: body.prefix(200), as: UTF8.self)
        return (400..<500).contains(status)
            ? .refusedByServer(status: status, message: message)
            : .unreachable("The server answered \(status): \(message)")
    }
}

/// A feed's request, its bytes parsed into events as they arrive. `URLSession`'s delegate is the way to read a body
/// as it comes that works with FoundationNetworking on Linux as on Apple platforms.
private final class EventStreamTask: NSObject, URLSessionDataDelegate, Sendable {
    private let continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation
    private let parser = Mutex(ServerSentEventParser())
    private let failureBody = Mutex<(status: Int, body: Data)?>(nil)

    private init(continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation) {
        self.continuation = continuation
    }

    static func start(_ request: URLRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        let delegate = EventStreamTask(continuation: continuation)
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = request.timeoutInterval
        // The session keeps its delegate until it is invalidated, which ends the task too.
        let session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
        let task = session.dataTask(with: request)
        // Later, on another thread: the stream ends when the task reading it is cancelled, under that task's
        // cancellation lock, and cancelling waits for the session's queue, which may be waiting for that lock to
        // deliver the last bytes (see `SyncConnection.exchange`).
        continuation.onTermination = { _ in
            DispatchQueue.global().async {
                task.cancel()
                session.invalidateAndCancel()
            }
        }
        task.resume()
        return events
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        if status == 200 {
            continuation.yield(.opened)
        } else {
            failureBody.withLock { $0 = (status, Data()) }
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let failed = failureBody.withLock { failure -> Bool in
            failure?.body.append(data)
            return failure != nil
        }
        guard !failed else { return }
        for event in parser.withLock({ $0.feed(data) }) { continuation.yield(event) }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let failure = failureBody.withLock({ $0 }) {
            continuation.finish(throwing: SyncConnection.failure(status: failure.status, body: failure.body))
        } else if let error {
            continuation.finish(throwing: SyncError.unreachable(error.localizedDescription))
        } else {
            continuation.finish()
        }
        session.finishTasksAndInvalidate()
    }
}
