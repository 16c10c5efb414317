import Foundation
import Hummingbird
import ServiceLifecycle
import StatehouseServer
import Synchronization

/// A ``SyncServer`` listening on loopback for one test: started on the port asked (0: any free one), stopped by
/// ``stop()``, and stopped anyway when the test's body throws (see ``withRunningServer(_:port:_:)``).
public final class RunningServer: Sendable {
    public let url: URL
    public let port: Int
    private let group: ServiceGroup
    private let running: Task<Void, any Error>

    private init(port: Int, group: ServiceGroup, running: Task<Void, any Error>) {
        self.port = port
        self.url = URL(string: "http://127.0.0.1:\(port)/")!
        self.group = group
        self.running = running
    }

    public static func start(_ server: SyncServer, port: Int = 0) async throws -> RunningServer {
        let (ports, portContinuation) = AsyncStream.makeStream(of: Int.self)
        let application = server.application(port: port) { portContinuation.yield($0) }
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [application], logger: application.logger))
        let running = Task { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let listening = await iterator.next() else { throw ServerDidNotStart() }
        return RunningServer(port: listening, group: group, running: running)
    }

    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await running.result
    }

    public struct ServerDidNotStart: Error {
        public init() {}
    }
}

/// Runs `body` with `server` listening, and stops it whatever `body` does.
public func withRunningServer<T>(
    _ server: SyncServer, port: Int = 0, _ body: (RunningServer) async throws -> T
) async throws -> T {
    let running = try await RunningServer.start(server, port: port)
    do {
        let result = try await body(running)
        await running.stop()
        return result
    } catch {
        await running.stop()
        throw error
    }
}
