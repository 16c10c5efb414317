import Hummingbird
import NIOCore
import ServiceLifecycle

/// A store's feed as server-sent events: the events ``AnyHostedStore/follow(client:after:)`` gives, with a comment
/// line whenever the feed has been quiet for a heartbeat, so that proxies keep it open and a client that vanished is
/// noticed (the server learns it only when a write fails).
struct FeedResponse: Sendable {
    let heartbeat: Duration
    let follow: @Sendable () -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void)

    init(heartbeat: Duration, follow: @escaping @Sendable () -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void)) {
        self.heartbeat = heartbeat
        self.follow = follow
    }

    func response() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in try await stream(to: &writer) }
        )
    }

    /// Follows only once the body is written, so that a response never sent holds no follower.
    private func stream(to writer: inout any ResponseBodyWriter) async throws {
        let (events, end) = follow()
        defer { end() }
        // An event or a heartbeat, whichever comes first; the stream's end (a follower cut off for reading too
        // slowly, or the store going away) ends the response, and the client resumes from the last id it saw.
        // Bounded as the follower's own buffer is, and for the same reason: an event that cannot wait is not
        // skipped, the feed ends.
        let (merged, continuation) = AsyncStream.makeStream(of: ByteBuffer?.self, bufferingPolicy: .bufferingOldest(16))
        let forwarding = Task {
            for await event in events {
                if case .dropped = continuation.yield(event) { break }
            }
            continuation.finish()
        }
        let beating = Task { [heartbeat] in
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                continuation.yield(nil)
            }
        }
        defer {
            forwarding.cancel()
            beating.cancel()
        }
        // A server shutting down ends the feed instead of waiting for the client to close it.
        try await withGracefulShutdownHandler {
            for await event in merged {
                try await writer.write(event ?? ByteBuffer(string: ": heartbeat\n\n"))
            }
        } onGracefulShutdown: {
            end()
        }
        try await writer.finish(nil)
    }
}
