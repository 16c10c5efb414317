import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import SyncFixtures

/// A router serving on a free loopback port, for the tests whose server is scripted.
struct ListeningRouter {
    let port: Int
    let group: ServiceGroup
    let running: Task<Void, any Error>

    var url: URL { URL(string: "http://127.0.0.1:\(port)/")! }

    static func start(_ router: Router<BasicRequestContext>) async throws -> ListeningRouter {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in portContinuation.yield(channel.localAddress?.port ?? 0) }
        )
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: application.logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw RunningServer.ServerDidNotStart() }
        return ListeningRouter(port: port, group: group, running: running)
    }

    func stop() async {
        await group.triggerGracefulShutdown()
        _ = await running.result
    }
}

/// A feed's answer: `first`, if any, then each of `events` as it comes, until they end.
func eventStream(first: ByteBuffer? = nil, _ events: AsyncStream<ByteBuffer>) -> Response {
    Response(
        status: .ok, headers: [.contentType: "text/event-stream"],
        body: ResponseBody { writer in
            if let first { try await writer.write(first) }
            for await chunk in events { try await writer.write(chunk) }
            try await writer.finish(nil)
        }
    )
}
