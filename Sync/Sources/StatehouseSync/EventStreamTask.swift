import Dispatch
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A feed's request, its bytes parsed into events as they arrive. `URLSession`'s delegate is the way to read a body
/// as it comes that works with FoundationNetworking on Linux as on Apple platforms.
final class EventStreamTask: NSObject, URLSessionDataDelegate, Sendable {
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
            continuation.finish(throwing: SyncHTTP.failure(status: failure.status, body: failure.body))
        } else if let error {
            continuation.finish(throwing: SyncError.unreachable(error.localizedDescription))
        } else {
            continuation.finish()
        }
        session.finishTasksAndInvalidate()
    }
}
