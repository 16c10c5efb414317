// The tests' sync server in a process of its own, for the tests that kill it mid-push, the one across two hosts, and
// the schemathesis run: `StatehouseSyncServerWorker DATABASE PORT [HOST]` hosts the tracker fixture on the SQLite
// file DATABASE, on HOST (127.0.0.1 unless given), prints "listening PORT" once it listens, and stops gracefully on
// SIGTERM.
import Foundation
import Hummingbird
import ServiceLifecycle
import StatehouseServer
import UnixSignals
import SyncFixtures

let arguments = CommandLine.arguments
guard (3...4).contains(arguments.count), let port = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: StatehouseSyncServerWorker DATABASE PORT [HOST]\n".utf8))
    exit(2)
}
let server = try Fixture.server(storage: .sqlite(path: arguments[1]))
let application = server.application(host: arguments.count == 4 ? arguments[3] : "127.0.0.1", port: port) { port in
    FileHandle.standardOutput.write(Data("listening \(port)\n".utf8))
}
try await ServiceGroup(
    configuration: ServiceGroupConfiguration(
        services: [application], gracefulShutdownSignals: [.sigterm], logger: application.logger
    )
).run()
