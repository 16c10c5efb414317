import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import ServiceLifecycle

/// `GET /TOKEN/api/events`: the inspector's events as server-sent events, each with its id, from the id the page
/// names (`Last-Event-ID` when the browser reconnects, `?since=` when the page first follows), and a comment line
/// every few seconds so that a closed page is noticed. What it resumes is the stores' logs; containers and the list
/// of stores the page reads from `api/overview` when the feed opens.
///
/// The page's buffer is bounded (``EventHub``): when it fills, the stream ends after what it holds, and the browser
/// reconnects with the last id it got and misses nothing the logs still hold.
struct EventFeed: Sendable {
    let registry: InspectorRegistry
    var heartbeat: Duration = .seconds(5)

    func response(for request: Request) -> Response {
        let resumed: UInt64? = request.headers[.lastEventID].flatMap { UInt64($0) }
        let asked: UInt64? = request.uri.queryParameters.get("since").flatMap { UInt64($0) }
        let since = resumed ?? asked ?? registry.hub.snapshot { $0 }
        return Response(
            status: .ok,
            headers: [.contentType: "text/event-stream", .cacheControl: "no-cache"],
            body: ResponseBody { writer in try await stream(after: since, to: &writer) }
        )
    }

    private func stream(after id: UInt64, to writer: inout any ResponseBodyWriter) async throws {
        let (items, heartbeat, end) = registry.hub.follow(after: id, backlog: registry.backlog(after:))
        let interval = self.heartbeat
        let beating = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                heartbeat()
            }
        }
        defer {
            end()
            beating.cancel()
        }
        // A server shutting down ends the feed instead of waiting for the page to close.
        try await withGracefulShutdownHandler {
            for await item in items {
                switch item {
                case .event(let id, let event): try await writer.write(ByteBuffer(string: event.serverSentEvent(id: id)))
                case .heartbeat: try await writer.write(ByteBuffer(string: ": heartbeat\n\n"))
                }
            }
        } onGracefulShutdown: {
            end()
        }
        try await writer.finish(nil)
    }
}

extension HTTPField.Name {
    /// Not among HTTPTypes' names: the id a reconnecting `EventSource` resumes after.
    static let lastEventID = Self("Last-Event-ID")!
}
