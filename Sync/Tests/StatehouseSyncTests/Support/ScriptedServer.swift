import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import StatehouseSyncWire
import SyncFixtures
import Synchronization

/// A server for the tracker store whose answers a test scripts: what the network between a real `SyncServer` and an
/// app may deliver, in an order the test chooses (a feed's bytes late, a push's answer lost behind a proxy).
/// One feed: the first `GET …/events` gets what ``send(_:)`` writes; any later one gets 503.
final class ScriptedServer: Sendable {
    let url: URL
    private let group: ServiceGroup
    private let running: Task<Void, any Error>
    private let feed: AsyncStream<ByteBuffer>.Continuation
    private let heartbeat: Task<Void, Never>
    private let pushedClient = Mutex<String?>(nil)
    private let pushCount = Mutex(0)
    private let feedsOpened = Mutex(0)

    /// The client named by the first push.
    var client: String? { pushedClient.withLock { $0 } }
    var pushes: Int { pushCount.withLock { $0 } }
    var feeds: Int { feedsOpened.withLock { $0 } }

    private init(url: URL, group: ServiceGroup, running: Task<Void, any Error>, feed: AsyncStream<ByteBuffer>.Continuation) {
        self.url = url
        self.group = group
        self.running = running
        self.feed = feed
        // As a SyncServer does (every 15 s there), so that the client's 60 s read timeout never ends the feed.
        heartbeat = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(5))
                feed.yield(ByteBuffer(string: ": heartbeat\n\n"))
            }
        }
    }

    /// - Parameters:
    ///   - push: The answer to the n-th push (from 1), given the request.
    ///   - pull: The answer to `GET /stores/tracker`.
    static func start(
        push: @escaping @Sendable (Int, PushRequest<TrackerAction>, ScriptedServer) async -> Response,
        pull: @escaping @Sendable () async -> Response
    ) async throws -> ScriptedServer {
        let (events, feed) = AsyncStream.makeStream(of: ByteBuffer.self)
        let box = Cell<ScriptedServer?>(nil)
        let taken = Cell(false)
        let router = Router()
        router.post("stores/tracker/actions") { request, _ -> Response in
            let body = try await request.body.collect(upTo: 1 << 24)
            let pushed = try JSONDecoder().decode(PushRequest<TrackerAction>.self, from: Data(body.readableBytesView))
            let server = box.withLock { $0 }!
            server.pushedClient.withLock { $0 = $0 ?? pushed.client }
            let n = server.pushCount.withLock { count in
                count += 1
                return count
            }
            return await push(n, pushed, server)
        }
        router.get("stores/tracker") { _, _ -> Response in await pull() }
        router.get("stores/tracker/events") { _, _ -> Response in
            let first = taken.withLock { taken in
                defer { taken = true }
                return !taken
            }
            guard first else { return Response(status: .serviceUnavailable) }
            box.withLock { $0 }!.feedsOpened.withLock { $0 += 1 }
            return eventStream(events)
        }
        let listening = try await ListeningRouter.start(router)
        let server = ScriptedServer(url: listening.url, group: listening.group, running: listening.running, feed: feed)
        box.withLock { $0 = server }
        return server
    }

    /// Writes one server-sent event on the feed.
    func send(_ name: String, id: Int64, _ payload: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        var buffer = ByteBuffer(string: "id: \(id)\nevent: \(name)\ndata: ")
        buffer.writeBytes(try! encoder.encode(payload))
        buffer.writeString("\n\n")
        feed.yield(buffer)
    }

    func stop() async {
        heartbeat.cancel()
        feed.finish()
        await group.triggerGracefulShutdown()
        _ = await running.result
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "application/json"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: try! JSONEncoder().encode(value)))
        )
    }
}
