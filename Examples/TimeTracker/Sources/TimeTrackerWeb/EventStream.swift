import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import Statehouse
import TimeTrackerCore

/// `GET /api/events`: server-sent events carrying the projects now, then after every change of the store's state,
/// whoever made it. Each event also carries the server's clock, so that pages tick running timers from it.
struct EventStream: Sendable {
    let store: Store<TrackerState, TrackerStoreAction>
    /// A comment line sent when nothing else was, so that proxies keep the connection open and a closed page is
    /// noticed (the write fails) even when nothing changes.
    var heartbeat: Duration = .seconds(15)

    private enum Event: Sendable {
        case projects([ProjectSummary])
        case heartbeat
    }

    private struct Payload: Encodable {
        var now: Double
        var projects: [ProjectPayload]
    }

    func response() -> Response {
        Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in try await stream(to: &writer) }
        )
    }

    /// Subscribes only once the body is written, so that a response never sent holds no subscription.
    private func stream(to writer: inout any ResponseBodyWriter) async throws {
        // Only the newest events matter to a slow page: each carries the whole list.
        let (events, continuation) = AsyncStream.makeStream(of: Event.self, bufferingPolicy: .bufferingNewest(4))
        let subscription = store.subscribe(\.projects) { continuation.yield(.projects($0)) }
        let heartbeat = heartbeat
        let beating = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: heartbeat)
                continuation.yield(.heartbeat)
            }
        }
        defer {
            subscription.cancel()
            beating.cancel()
        }
        // A server shutting down ends the stream instead of waiting for the page to close.
        try await withGracefulShutdownHandler {
            for await event in events {
                try await writer.write(ByteBuffer(string: Self.text(of: event)))
            }
        } onGracefulShutdown: {
            continuation.finish()
        }
        try await writer.finish(nil)
    }

    private static func text(of event: Event) -> String {
        switch event {
        case .heartbeat:
            return ": heartbeat\n\n"
        case .projects(let projects):
            let payload = Payload(now: Date().timeIntervalSince1970, projects: projects.map { ProjectPayload($0) })
            let json = (try? JSONEncoder().encode(payload)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
            return "event: projects\ndata: \(json)\n\n"
        }
    }
}
