#if PostgreSQL  // The package trait that builds the PostgreSQL backend (Package.swift).
import Foundation
import Testing
import TimeTrackerTestSupport

/// `serve` and the CLI with `--database postgres://…`: two servers and a command line on one PostgreSQL database
/// are live together, whichever of them changes it.
@Suite(
    "timetrack on PostgreSQL, across processes", .serialized,
    .enabled(if: TemporaryPostgresDatabase.isInstalled, "PostgreSQL is not installed: apt-get install postgresql (scripts/prerequisites does it)")
)
struct PostgresCLITests {
    /// Adds a project through a server's API, as the page does.
    private static func add(_ name: String, through port: Int) -> String {
        let connection = try? RawConnection(port: port)
        let body = #"{"name":"\#(name)"}"#
        connection?.send(
            "POST /api/projects HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nContent-Type: application/json\r\n"
                + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)"
        )
        return connection?.receive { $0.contains("\r\n\r\n") } ?? ""
    }

    @Test func twoServersAndACommandLineOnOneDatabaseSeeEachOthersChanges() async throws {
        let database = try TemporaryPostgresDatabase()
        let (first, firstPort) = try await TimetrackProcess.serve(database.commandLineArguments)
        let (second, secondPort) = try await TimetrackProcess.serve(database.commandLineArguments)
        let firstPage = try EventStreamClient(port: firstPort)
        let secondPage = try EventStreamClient(port: secondPort)
        #expect(firstPage.next { $0.contains("projects") } != nil)
        #expect(secondPage.next { $0.contains("projects") } != nil)

        #expect(Self.add("From the first", through: firstPort).hasPrefix("HTTP/1.1 201"))
        #expect(secondPage.next(timeout: .seconds(60)) { $0.contains("From the first") } != nil)
        #expect(Self.add("From the second", through: secondPort).hasPrefix("HTTP/1.1 201"))
        #expect(firstPage.next(timeout: .seconds(60)) { $0.contains("From the second") } != nil)

        let cli = try TimetrackProcess.run(["start", "from the first"] + database.commandLineArguments)
        #expect(cli.status == 0, "\(cli.errors)")
        for page in [firstPage, secondPage] {
            #expect(page.next(timeout: .seconds(60)) { $0.contains("runningSince") } != nil)
        }
        // The rules hold across servers: the second add of a name is refused by the other server too.
        #expect(Self.add("FROM THE FIRST", through: secondPort).hasPrefix("HTTP/1.1 409"))
        for server in [first, second] {
            server.signal(SIGINT)
            #expect(server.waitForExit() == 0)
            #expect(server.output.contains(database.url.replacingOccurrences(of: "?sslmode=disable", with: "")))
        }
    }

    @Test func aCommandLineOnPostgreSQLDoesWhatItDoesOnAFile() throws {
        let database = try TemporaryPostgresDatabase()
        let arguments = database.commandLineArguments
        #expect(try TimetrackProcess.run(["add", " Writing "] + arguments).output == "Added \"Writing\".\n")
        #expect(try TimetrackProcess.run(["start", "writing"] + arguments).status == 0)
        let again = try TimetrackProcess.run(["start", "WRITING"] + arguments)
        #expect(again.status != 0 && again.errors.contains("\"Writing\" is already running; stop it first."))
        #expect(try TimetrackProcess.run(["stop", "writing"] + arguments).output.hasPrefix("Stopped \"Writing\": 0:00:0"))
        #expect(try TimetrackProcess.run(["list", "--json"] + arguments).output.contains(#""name":"Writing""#))
        #expect(try TimetrackProcess.run(["delete", "writing"] + arguments).output == "Deleted \"Writing\".\n")
        #expect(try database.count("deletedProject") == 1)
    }

    @Test func aServerThatCannotBeUsedIsAClearErrorWithoutThePassword() throws {
        let database = try TemporaryPostgresDatabase()
        let missing = "postgres://statehouse:s3cret@127.0.0.1:\(database.port)/no_such_database?sslmode=disable"
        let result = try TimetrackProcess.run(["serve", "--port", "0", "--database", missing])
        #expect(result.status == 1)
        #expect(result.errors.contains("postgres://statehouse@127.0.0.1:\(database.port)/no_such_database"), "\(result.errors)")
        #expect(result.errors.contains("does not exist"), "\(result.errors)")
        #expect(!result.errors.contains("s3cret"))
        let both = try TimetrackProcess.run(["list", "--db", "/tmp/x.sqlite"] + database.commandLineArguments)
        #expect(both.status != 0 && both.errors.contains("not both"))
    }
}

/// `--database` URLs that cannot be used, refused before any connection: no server needed.
@Suite("timetrack's --database URLs")
struct PostgresURLTests {
    // A password in the URL is a secret: no refusal, and no message about a server that cannot be used, repeats it.
    @Test(arguments: [
        "postgres://me:s3cret@/timetrack",
        "postgres://me:s3cret@127.0.0.1:5432/",
        "postgres://:s3cret@127.0.0.1/timetrack",
        "postgres://me:s3cret@127.0.0.1/timetrack?sslmode=maybe",
        "postgres://me:s3cret@127.0.0.1/timetrack?password=s3cret",
        "postgres://me:s3cret@127.0.0.1/timetrack/extra",
        "mysql://me:s3cret@127.0.0.1/timetrack",
        "postgresql://me:s3cret@127.0.0.1:99999/timetrack",
    ])
    func aBadURLIsAClearErrorWithoutThePassword(url: String) throws {
        let result = try TimetrackProcess.run(["list", "--database", url])
        #expect(result.status == 1)
        #expect(result.errors.hasPrefix("Error: Cannot use "), "\(result.errors)")
        #expect(!result.errors.contains("s3c"), "\(result.errors)")
    }
}
#endif
