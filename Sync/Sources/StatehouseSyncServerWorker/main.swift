// The tests' sync server in a process of its own, for the tests that kill it mid-push, the one across two hosts, and
// the schemathesis run: `StatehouseSyncServerWorker DATABASE PORT [HOST]` hosts the tracker fixture on the SQLite
// file DATABASE, on HOST (127.0.0.1 unless given); `StatehouseSyncServerWorker postgres:PGPORT:LOG PORT` hosts it
// (and the settings container) on the action log LOG of the PostgreSQL server on 127.0.0.1:PGPORT, as one of
// several instances. It prints "listening PORT" once it listens, and stops gracefully on SIGTERM.
import Foundation
import Hummingbird
import PostgresNIO
import ServiceLifecycle
import StatehousePostgres
import StatehouseServer
import StatehouseServerPostgres
import UnixSignals
import SyncFixtures

let arguments = CommandLine.arguments
guard (3...4).contains(arguments.count), let port = Int(arguments[2]) else {
    FileHandle.standardError.write(Data("usage: StatehouseSyncServerWorker DATABASE|postgres:PGPORT:LOG PORT [HOST]\n".utf8))
    exit(2)
}
let database = arguments[1].split(separator: ":").map(String.init)
let postgres = database.count == 3 && database[0] == "postgres" ? (port: Int(database[1]) ?? 0, log: database[2]) : nil
let client = postgres.map { postgres in
    PostgresClient(configuration: PostgresClient.Configuration(
        host: "127.0.0.1", port: postgres.port, username: "statehouse", password: nil, database: "postgres", tls: .disable
    ))
}
let server: SyncServer
var replications: [SyncReplication] = []
if let client, let postgres {
    (server, replications) = try Fixture.replicatedServer(client: client, log: postgres.log)
} else {
    server = try Fixture.server(storage: .sqlite(path: arguments[1]))
}
let application = server.application(host: arguments.count == 4 ? arguments[3] : "127.0.0.1", port: port) { port in
    FileHandle.standardOutput.write(Data("listening \(port)\n".utf8))
}
let services = ServiceGroup(
    configuration: ServiceGroupConfiguration(
        services: [application], gracefulShutdownSignals: [.sigterm], logger: application.logger
    )
)
try await withThrowingTaskGroup(of: Void.self) { [replications] group in
    if let client { group.addTask(executorPreference: PostgresStorage.executor) { await client.run() } }
    for replication in replications { group.addTask { try await replication.run() } }
    try await services.run()
    group.cancelAll()
}
