import Dispatch
import Foundation
import StatehouseSyncWire

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests to a sync server, with its token, on Foundation's `URLSession` (FoundationNetworking on Linux), for the
/// connections of stores and of containers.
struct SyncHTTP: Sendable {
    let server: URL
    let token: String
    let session: URLSession

    init(server: URL, token: String, timeout: TimeInterval = 30) {
        self.server = server
        self.token = token
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        self.session = URLSession(configuration: configuration)
    }

    /// The request's answer, with the token, through a completion handler rather than `URLSession.data(for:)`:
    /// with FoundationNetworking, cancelling the task that awaits `data(for:)` cancels the request under the task's
    /// cancellation lock, while the session's queue, finishing the same request, waits for that lock to resume it:
    /// a deadlock (seen when a synced store stopped mid-push). Not cancelled, a request ends by itself, within its
    /// timeout.
    func exchange(_ request: URLRequest) async -> (Data, HTTPURLResponse?, (any Error)?) {
        await withCheckedContinuation { continuation in
            session.dataTask(with: authorized(request)) { data, response, error in
                continuation.resume(returning: (data ?? Data(), response as? HTTPURLResponse, error))
            }.resume()
        }
    }

    /// The request's answer, waited for on this thread: for storages, whose calls are synchronous. The session
    /// answers on its own queue, never this thread, so the wait ends within the request's timeout.
    func exchangeWaiting(_ request: URLRequest) -> (Data, HTTPURLResponse?, (any Error)?) {
        let answered = DispatchSemaphore(value: 0)
        let answer = Answered()
        session.dataTask(with: authorized(request)) { data, response, error in
            answer.value = (data ?? Data(), response as? HTTPURLResponse, error)
            answered.signal()
        }.resume()
        answered.wait()
        return answer.value
    }

    /// The server-sent events at `url`, from just after `lastEventID`. Ends when the server ends it; throws when it
    /// fails.
    func feed(_ url: URL, after lastEventID: Int64?) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        var request = authorized(URLRequest(url: url))
        request.setValue("text/event-stream", forHTTPHeaderField: "Accept")
        if let lastEventID { request.setValue(String(lastEventID), forHTTPHeaderField: "Last-Event-ID") }
        // The server's heartbeat comes every 15 s: a minute of silence means the connection is gone.
        request.timeoutInterval = 60
        #if os(Linux)
        return LinuxFeedClient.start(request)
        #else
        return EventStreamTask.start(request)
        #endif
    }

    private func authorized(_ request: URLRequest) -> URLRequest {
        var request = request
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        return request
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

/// The answer a waiting request hands from the session's queue to the waiting thread.
///
/// `@unchecked Sendable`, safe because the session's queue writes it once, before signalling the semaphore, and the
/// waiting thread reads it only after the semaphore's wait returns: the semaphore orders the write before the read.
private final class Answered: @unchecked Sendable {
    var value: (Data, HTTPURLResponse?, (any Error)?) = (Data(), nil, nil)
}
