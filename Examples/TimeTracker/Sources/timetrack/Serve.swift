import ArgumentParser
import Foundation
import Hummingbird
import Statehouse
import TimeTrackerCore
import TimeTrackerWeb

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the live page and the JSON API.",
        discussion: "Open the printed address in a browser. Every open page updates live, whoever changes the database."
    )

    @OptionGroup var database: DatabaseOptions
    @Option(help: "The address to listen on. Only this machine can connect to the default.") var host = "127.0.0.1"
    @Option(help: "The port to listen on; 0 picks a free one.") var port = 8080
    @Option(
        name: .customLong("allow-host"),
        help: "Another name the server may be reached by (a proxy's, a machine's); repeat for several."
    ) var allowedHosts: [String] = []

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("A port is between 0 and 65535.") }
    }

    func run() async throws {
        let tracker = try database.openTracker()
        let host = host
        let application = WebApplication.make(tracker: tracker, host: host, port: port, allowedHosts: allowedHosts) { port in
            StandardOutput.report("timetrack is serving http://\(host):\(port)/ (database: \(tracker.path))\n")
        }
        try await application.runService()
        StatehouseLifecycle.flushPendingWrites()
    }
}
