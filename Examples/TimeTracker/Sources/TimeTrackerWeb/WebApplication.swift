import Hummingbird
import StatehouseServer
import HummingbirdCore
import TimeTrackerCore

/// The `serve` command's server: the live page and the JSON API on one tracker.
public enum WebApplication {
    /// Listens on `host:port`; 127.0.0.1 by default, so that nothing outside this machine sees the tracker.
    ///
    /// - Parameters:
    ///   - requestGuard: What requests the server refuses; see ``RequestGuard``.
    ///   - limits: How many connections the server keeps, and for how long.
    ///   - sync: The tracker hosted for apps that sync with it, served under `/sync/` (its routes are in
    ///     StatehouseServer's `openapi.json`).
    ///   - onListening: Called with the port once the server listens (the one the system chose, for port 0).
    public static func make(
        tracker: TimeTracker,
        host: String = "127.0.0.1",
        port: Int = 8080,
        requestGuard: RequestGuard? = nil,
        limits: ConnectionLimits = ConnectionLimits(),
        sync: TrackerSyncHost? = nil,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            router: router(
                tracker: tracker, requestGuard: requestGuard ?? RequestGuard(listeningHost: host),
                bodyTimeout: limits.idleTimeout, sync: sync
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
    /// - Parameters:
    ///   - bodyTimeout: How long a request body may take to arrive whole (the server's idle timeout).
    ///   - sync: The tracker hosted for apps that sync with it, if it is.
    public static func router(
        tracker: TimeTracker,
        requestGuard: RequestGuard = RequestGuard(listeningHost: "127.0.0.1"),
        bodyTimeout: Duration = .seconds(30),
        sync: TrackerSyncHost? = nil
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
        SyncAPI(host: sync).register(on: router.group("api"))
        sync?.server.addRoutes(to: router.group("sync"))
        return router
    }
}
