import ArgumentParser
import Foundation
import Hummingbird
import ServiceLifecycle
import UnixSignals
import Statehouse
import StatehouseInspector
import TimeTrackerCore
import TimeTrackerWeb

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the live page and the JSON API.",
        discussion: """
            Open the printed address in a browser. Every open page updates live, whoever changes the database. \
            Listening beyond this machine (--host other than a loopback address) needs an access token: give one \
            with --token or $TIMETRACK_TOKEN, or one is made; the printed link carries it. With --inspect, the \
            Statehouse Inspector shows the tracker's store live (its state, every action and what it changed) at \
            another address on this machine, which it prints. With an access token, the tracker is also hosted for \
            apps that sync with it offline-first (`timetrack --remote ADDRESS`, with the same token), on a database \
            file (--db): the server keeps their sequence numbers in a file beside it.
            """
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "The address to listen on. Only this machine can connect to the default.") var host = "127.0.0.1"
    @Option(help: "The port to listen on; 0 picks a free one.") var port = 8080
    @Option(
        name: .customLong("allow-host"),
        help: "Another name the server may be reached by (a proxy's, a machine's); repeat for several."
    ) var allowedHosts: [String] = []
    @Option(help: "The access token API requests must present (default: $TIMETRACK_TOKEN; made up if needed).")
    var token: String?
    @Option(name: .customLong("idle-timeout"), help: "Seconds a connection may send nothing before it is closed.")
    var idleTimeout: Double = 30
    @Option(name: .customLong("max-connections"), help: "The most connections at once (default: what the descriptor limit allows).")
    var maximumConnections: Int?
    @Flag(help: "Also serve the Statehouse Inspector's page on the tracker's store, on loopback, and print its address.")
    var inspect = false

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("A port is between 0 and 65535.") }
        guard idleTimeout > 0, idleTimeout <= 86_400 else {
            throw ValidationError("An idle timeout is a number of seconds above 0, at most 86400 (a day).")
        }
        if let maximumConnections, maximumConnections < 1 { throw ValidationError("--max-connections is at least 1.") }
        guard token == nil || database.tokenFile == nil else {
            throw ValidationError("Give the access token with --token or --token-file, not both.")
        }
        if let token = token ?? ProcessInfo.processInfo.environment["TIMETRACK_TOKEN"], token.count < 16 {
            throw ValidationError("An access token has at least 16 characters.")
        }
        try database.refuseRemote("serve", because: "it serves the database it is given; run it where the database is.")
    }

    func run() async throws {
        let tracker = try await database.openTracker()
        // What the command line says wins over the environment.
        let accessToken = try token ?? database.tokenFile.map { try TokenFile.readOrCreate($0, making: Self.makeToken) }
            ?? ProcessInfo.processInfo.environment["TIMETRACK_TOKEN"]
            ?? (RequestGuard.isLoopback(host) ? nil : Self.makeToken())
        let sync = try accessToken.flatMap { token in
            try database.url == nil
                ? TrackerSyncHost(tracker: tracker, storagePath: TrackerSyncHost.storagePath(besides: tracker.path), token: token)
                : nil
        }
        let address = "http://\(host.contains(":") ? "[\(host)]" : host)"
        let link = accessToken.map { "/#token=\($0)" } ?? "/"
        let application = WebApplication.make(
            tracker: tracker, host: host, port: port,
            requestGuard: RequestGuard(listeningHost: host, extraHosts: allowedHosts, accessToken: accessToken),
            limits: ConnectionLimits(idleTimeout: .seconds(idleTimeout), maximumConnections: maximumConnections),
            sync: sync
        ) { [tokenFile = database.tokenFile] port in
            StandardOutput.report("timetrack is serving \(address):\(port)\(link) (database: \(tracker.path))\n")
            if accessToken != nil {
                StandardOutput.warn("requests need the access token; the link above carries it: share it only with people you trust.")
            }
            if sync != nil {
                let token = tokenFile.map { "--token-file \($0)" } ?? "$TIMETRACK_TOKEN set to the access token"
                StandardOutput.report("apps sync with it: timetrack --remote \(address):\(port)/ \(token) COMMAND\n")
            }
        }
        // SIGTERM and SIGINT shut the server down gracefully (open event streams end), and so does a database file
        // that is removed or replaced: the pages are told why, then the command fails with the same message.
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: application),
                .init(service: DatabaseLossWatch(tracker: tracker), successTerminationBehavior: .gracefullyShutdownGroup),
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: application.logger
        )
        // A page that stopped reading leaves its event stream waiting to write, and a graceful shutdown waits for
        // every stream: past this, the streams are cancelled instead.
        configuration.maximumGracefulShutdownDuration = .seconds(5)
        let inspector = inspect ? try await Self.inspector(of: tracker) : nil
        try await ServiceGroup(configuration: configuration).run()
        await inspector?.stop()
        StatehouseLifecycle.flushPendingWrites()
        if tracker.store.state.problem != nil { throw TrackerError.databaseGone(path: tracker.path) }
    }

    /// The inspector on the tracker's store. It may not move the store: the database is the source of truth, and the
    /// store only shows it.
    private static func inspector(of tracker: TimeTracker) async throws -> Inspector {
        let inspector = try await Inspector.start()
        inspector.attach(tracker.store, name: "timetrack")
        StandardOutput.report("the Statehouse Inspector shows the tracker's store at \(inspector.url.absoluteString)\n")
        return inspector
    }

    /// 128 random bits, as letters and digits.
    private static func makeToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 36) }.joined(separator: "-")
    }
}

/// Ends when the tracker's database file is removed or replaced (``TrackerState/problem``), which shuts the server
/// down; or when the server shuts down for another reason.
private struct DatabaseLossWatch: Service {
    let tracker: TimeTracker

    func run() async throws {
        // Leaving the loop, for either reason, ends the subscription.
        for await problem in tracker.store.values(\.problem).cancelOnGracefulShutdown() where problem != nil {
            return
        }
    }
}
