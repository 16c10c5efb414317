import Hummingbird
import HummingbirdCore
import TimeTrackerCore

/// The `serve` command's server: the live page and the JSON API on one tracker.
public enum WebApplication {
    /// Listens on `host:port`; 127.0.0.1 by default, so that nothing outside this machine sees the tracker.
    ///
    /// - Parameters:
    ///   - requestGuard: What requests the server refuses; see ``RequestGuard``.
    ///   - limits: How many connections the server keeps, and for how long.
    ///   - onListening: Called with the port once the server listens (the one the system chose, for port 0).
    public static func make(
        tracker: TimeTracker,
        host: String = "127.0.0.1",
        port: Int = 8080,
        requestGuard: RequestGuard? = nil,
        limits: ConnectionLimits = ConnectionLimits(),
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(
                tracker: tracker, requestGuard: requestGuard ?? RequestGuard(listeningHost: host),
                bodyTimeout: limits.idleTimeout
            ),
            server: .http1(configuration: limits.serverConfiguration),
            configuration: ApplicationConfiguration(
                address: .hostname(host, port: port),
                serverName: "timetrack",
                availableConnectionsDelegate: MaximumAvailableConnections(limits.maximumConnections)
            ),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? port) }
        )
    }

    /// The routes, apart from the server, for tests.
    ///
    /// - Parameter bodyTimeout: How long a request body may take to arrive whole (the server's idle timeout).
    public static func router(
        tracker: TimeTracker,
        requestGuard: RequestGuard = RequestGuard(listeningHost: "127.0.0.1"),
        bodyTimeout: Duration = .seconds(30)
    ) -> Router<BasicRequestContext> {
        let router = Router(options: .autoGenerateHeadEndpoints)
        router.add(middleware: RequestGuardMiddleware(requestGuard: requestGuard))
        router.add(middleware: MethodNotAllowedMiddleware())
        router.get("/") { _, _ in Page.response }
        router.get("app.js") { _, _ in Page.scriptResponse }
        let api = ProjectsAPI(tracker: tracker, bodyTimeout: bodyTimeout)
        api.register(on: router.group("api/projects"))
        api.registerHistory(on: router.group("api"))
        api.registerReport(on: router.group("api"))
        api.registerActivities(projects: router.group("api/projects"), activities: router.group("api/activities"))
        let events = ProjectEvents(tracker: tracker)
        router.get("api/events") { _, _ in EventStream(events: events).response() }
        return router
    }
}
