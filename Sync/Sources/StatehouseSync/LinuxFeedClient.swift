#if os(Linux)
import AsyncHTTPClient
import Foundation
import FoundationNetworking
import NIOCore
import NIOHTTP1

/// A feed's request on Linux, on AsyncHTTPClient rather than FoundationNetworking's `URLSession`.
///
/// FoundationNetworking (libcurl under dispatch sources) keeps re-arming the socket's sources while a response
/// streams: a process following a feed that sends nothing used 90 % of a processor (Swift 6.3.1, with or without a
/// timeout). Requests that end stay on `URLSession`, on Linux too. Redirects are not followed here: a feed's address
/// is the server's own.
enum LinuxFeedClient {
    /// One client for the process's feeds, never shut down: it lives as long as the process. A connection that
    /// brings nothing for a minute is gone (the server's heartbeat comes every 15 s), and the feed fails.
    private static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.timeout = HTTPClient.Configuration.Timeout(connect: .seconds(30), read: .seconds(60))
        configuration.redirectConfiguration = .disallow
        // A feed holds its connection for as long as it is followed: the pool's default of 8 a host would leave a
        // ninth store or container of one app waiting for another's to end.
        configuration.connectionPool = HTTPClient.Configuration.ConnectionPool(
            idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 100_000
        )
        return HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
    }()

    /// The largest error body kept, for the message of a refused feed.
    private static let errorBodyLimit = 64 * 1024

    static func start(_ request: URLRequest) -> AsyncThrowingStream<ServerSentEvent, any Error> {
        let (events, continuation) = AsyncThrowingStream.makeStream(of: ServerSentEvent.self)
        let reading = Task {
            do {
                var feed = HTTPClientRequest(url: request.url?.absoluteString ?? "")
                for (name, value) in request.allHTTPHeaderFields ?? [:] { feed.headers.add(name: name, value: value) }
                let response = try await client.execute(feed, timeout: .seconds(60))
                guard response.status == .ok else {
                    // Its start is enough for the message: a proxy's page of refusal may be long.
                    var body = Data()
                    for try await buffer in response.body where body.count < errorBodyLimit {
                        body.append(contentsOf: buffer.readableBytesView.prefix(errorBodyLimit - body.count))
                    }
                    throw SyncHTTP.failure(status: Int(response.status.code), body: body)
                }
                continuation.yield(.opened)
                var parser = ServerSentEventParser()
                for try await buffer in response.body {
                    for event in parser.feed(buffer.readableBytesView) { continuation.yield(event) }
                }
                continuation.finish()
            } catch let error as SyncError {
                continuation.finish(throwing: error)
            } catch {
                continuation.finish(throwing: SyncError.unreachable(String(describing: error)))
            }
        }
        continuation.onTermination = { _ in reading.cancel() }
        return events
    }
}
#endif
