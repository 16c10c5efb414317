import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import Synchronization

/// `GET /api/events`: server-sent events carrying the projects now, then after every change of the store's state,
/// whoever made it (the bytes are ``ProjectEvents``', shared by every page). Before each, a `clock` event with the
/// server's time, so that pages tick running timers from the server's clock whenever they connected.
struct EventStream: Sendable {
    let events: ProjectEvents
    /// A comment line sent when nothing else was, so that proxies keep the connection open and a closed page is
    /// noticed (the write fails) even when nothing changes: the server learns that a page went away only by
    /// writing to it, so this bounds how long a closed page's connection lingers (in CLOSE-WAIT).
    var heartbeat: Duration = .seconds(5)

    func response() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in try await stream(to: &writer) }
        )
    }

    private enum Event: Sendable {
        case projects(ByteBuffer)
        case heartbeat
    }

    /// Subscribes only once the body is written, so that a response never sent holds no subscription.
    private func stream(to writer: inout any ResponseBodyWriter) async throws {
        let (projects, endProjects) = events.subscribe()
        let (merged, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(4))
        let forwarding = Task {
            for await event in projects { continuation.yield(.projects(event)) }
            continuation.finish()
        }
        let heartbeat = heartbeat
        // At most one heartbeat waits: heartbeats piling up behind a slow page would push the newest projects out
        // of the buffer.
        let heartbeatWaiting = WaitingFlag()
        let beating = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                if heartbeatWaiting.raise() { continuation.yield(.heartbeat) }
            }
        }
        defer {
            endProjects()
            forwarding.cancel()
            beating.cancel()
        }
        // A server shutting down ends the stream instead of waiting for the page to close.
        try await withGracefulShutdownHandler {
            for await event in merged {
                switch event {
                case .projects(let bytes):
                    // Anything written is a sign of life: a heartbeat pushed out of the buffer by newer events must
                    // not keep the next one from being queued.
                    heartbeatWaiting.lower()
                    try await writer.write(ByteBuffer(string: "event: clock\ndata: \(Date().timeIntervalSince1970)\n\n"))
                    try await writer.write(bytes)
                case .heartbeat:
                    heartbeatWaiting.lower()
                    try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                }
            }
        } onGracefulShutdown: {
            // Ends the projects first: what they hold still goes out (the last may say why the server stops), then
            // the forwarding ends this stream.
            endProjects()
        }
        try await writer.finish(nil)
    }
}

/// Whether something is already waiting in a queue, so that a second one is not added.
private final class WaitingFlag: Sendable {
    private let waiting = Atomic(false)

    /// Raises the flag; `false` if it was up already.
    func raise() -> Bool {
        !waiting.exchange(true, ordering: .acquiringAndReleasing)
    }

    func lower() {
        waiting.store(false, ordering: .releasing)
    }
}
