import Foundation
import Testing
import TimeTrackerTestSupport
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `timetrack --remote URL`: every command on a copy of a server's tracker, offline-first. Changes reach the server's
/// database and every other copy; made while the server is down, they are queued and sent by `timetrack sync`; a
/// change the server refuses is undone in the copy and reported. Real processes: a server and its clients.
@Suite("timetrack --remote", .serialized)
struct RemoteCommandTests {
    /// A server's database and token file, and the server process while it runs.
    final class Server {
        let database = TemporaryDatabase()
        var tokenFile: String { database.directory.appendingPathComponent("token").path }
        private(set) var process: TimetrackProcess?
        private(set) var port = 0

        func start() async throws {
            let (process, port) = try await TimetrackProcess.serve(
                ["--db", database.path, "--token-file", tokenFile], port: port
            )
            (self.process, self.port) = (process, port)
        }

        func stop() async {
            guard let process else { return }
            process.signal(SIGINT)
            _ = process.waitForExit()
            self.process = nil
        }

        var url: String { "http://127.0.0.1:\(port)/" }

        deinit {
            process?.signal(SIGKILL)
        }
    }

    /// A copy of the server's tracker, in a folder of its own.
    struct Copy {
        let database = TemporaryDatabase()

        func run(
            _ server: Server, _ arguments: [String], tokenFile: String? = nil, environment: [String: String] = [:]
        ) async throws -> (status: Int32, output: String, errors: String) {
            let arguments = arguments + remoteOptions(server, tokenFile: tokenFile)
            return try await offThePool { try TimetrackProcess.run(arguments, environment: environment) }
        }

        /// What points a command at `server` through this copy.
        func remoteOptions(_ server: Server, tokenFile: String? = nil) -> [String] {
            ["--remote", server.url, "--token-file", tokenFile ?? server.tokenFile, "--db", database.path]
        }

        /// `watch --remote` on this copy, left running.
        func watch(_ server: Server) throws -> TimetrackProcess {
            try TimetrackProcess(["watch"] + remoteOptions(server))
        }

        /// Dates the changes queued in the copy's outbox `seconds` later, as a machine whose clock is ahead would
        /// have dated them.
        func dateQueuedChanges(aheadBy seconds: Double) throws {
            let outbox = URL(fileURLWithPath: database.path + ".outbox")
            let journals = try FileManager.default.contentsOfDirectory(at: outbox, includingPropertiesForKeys: nil)
                .filter { $0.pathExtension == "state" }
            try #require(journals.count == 1, "\(journals)")
            var journal = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: journals[0])) as? [String: Any])
            var pending = try #require(journal["pending"] as? [[String: Any]])
            try #require(!pending.isEmpty)
            for index in pending.indices {
                var action = try #require(pending[index]["action"] as? [String: Any])
                var logged = try #require(action["logged"] as? [String: Any])
                logged["at"] = try #require(logged["at"] as? Double) + seconds
                action["logged"] = logged
                pending[index]["action"] = action
            }
            journal["pending"] = pending
            try JSONSerialization.data(withJSONObject: journal).write(to: journals[0])
        }

        /// Runs a command on the copy's database as on any other, without `--remote`.
        func runWithoutRemote(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
            let arguments = arguments + ["--db", database.path]
            return try await offThePool { try TimetrackProcess.run(arguments) }
        }
    }

    private func local(_ server: Server, _ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        let arguments = arguments + ["--db", server.database.path]
        return try await offThePool { try TimetrackProcess.run(arguments) }
    }

    private func names(_ listed: String) -> [String] {
        listed.split(separator: "\n").dropFirst().map { String($0.split(separator: " ").first ?? "") }
    }

    @Test func aChangeReachesTheServersDatabaseAndEveryCopy() async throws {
        let server = Server()
        try await server.start()
        let (a, b) = (Copy(), Copy())
        let added = try await a.run(server, ["add", "Writing"])
        #expect(added.status == 0 && added.output == "Added \"Writing\".\n" && added.errors.isEmpty, "\(added)")
        #expect(names(try await local(server, ["list"]).output) == ["Writing"])
        #expect(try await b.run(server, ["start", "writing"]).status == 0)
        #expect(try await a.run(server, ["list"]).output.contains("running since"))
        #expect(try await local(server, ["list"]).output.contains("running since"))
        await server.stop()
    }

    @Test func aChangeMadeWhileTheServerIsDownIsQueuedThenSentBySync() async throws {
        let server = Server()
        try await server.start()
        let copy = Copy()
        #expect(try await copy.run(server, ["add", "Writing"]).status == 0)
        await server.stop()
        let nothingToSend = try await copy.run(server, ["sync"])
        #expect(nothingToSend.status != 0 && nothingToSend.output.contains("cannot be reached"), "\(nothingToSend)")
        let queued = try await copy.run(server, ["add", "Reading"])
        #expect(queued.status == 0 && queued.output == "Added \"Reading\".\n", "\(queued)")
        #expect(queued.errors.contains("queued") && queued.errors.contains("1 change waits here"), "\(queued.errors)")
        let listed = try await copy.run(server, ["list"])
        #expect(names(listed.output) == ["Reading", "Writing"])
        #expect(listed.errors.contains("cannot be reached"))
        let offline = try await copy.run(server, ["sync"])
        #expect(offline.status != 0 && offline.output.contains("Queued"), "\(offline)")
        try await server.start()
        #expect(names(try await local(server, ["list"]).output) == ["Writing"])
        let synced = try await copy.run(server, ["sync"])
        #expect(synced.status == 0 && synced.output.hasPrefix("In step with \(server.url). 2 projects."), "\(synced)")
        #expect(names(try await local(server, ["list"]).output) == ["Reading", "Writing"])
        await server.stop()
    }

    /// Two copies add the same name offline. The server takes the first to sync; the other's add is refused there,
    /// undone in its copy, and reported: both end with the server's state.
    @Test func conflictingOfflineChangesConvergeOnTheServersState() async throws {
        let server = Server()
        try await server.start()
        let (a, b) = (Copy(), Copy())
        #expect(try await a.run(server, ["list"]).status == 0)
        #expect(try await b.run(server, ["list"]).status == 0)
        await server.stop()
        #expect(try await a.run(server, ["add", "Writing"]).status == 0)
        #expect(try await b.run(server, ["add", "writing"]).status == 0)
        #expect(try await b.run(server, ["add", "Reading"]).status == 0)
        try await server.start()
        #expect(try await a.run(server, ["sync"]).status == 0)
        // A command whose own change the server takes succeeds, and tells of the earlier change it refused.
        let other = try await b.run(server, ["add", "Other"])
        #expect(other.status == 0 && other.output == "Added \"Other\".\n", "\(other)")
        #expect(other.errors.contains("The server refused") && other.errors.contains("already exists"), "\(other)")
        let expected = ["Other", "Reading", "Writing"]
        #expect(names(try await local(server, ["list"]).output) == expected)
        #expect(names(try await a.run(server, ["list"]).output) == expected)
        #expect(names(try await b.run(server, ["list"]).output) == expected)
        await server.stop()
    }

    /// A wrong token: the server refuses to sync, the command says so and fails, and the change waits in the copy
    /// until a command with the right token sends it. A token file given wins over `$TIMETRACK_TOKEN`.
    @Test func aWrongTokenIsRefusedAndTheChangeWaits() async throws {
        let server = Server()
        try await server.start()
        let copy = Copy()
        let wrongFile = copy.database.directory.appendingPathComponent("wrong-token").path
        try FileManager.default.createDirectory(at: copy.database.directory, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(
            atPath: wrongFile, contents: Data("not-the-servers-token\n".utf8), attributes: [.posixPermissions: 0o600]
        ))
        let wrong = try await copy.run(server, ["add", "Writing"], tokenFile: wrongFile)
        #expect(wrong.status != 0 && wrong.errors.contains("401") && wrong.errors.contains("Check the token"), "\(wrong)")
        #expect(names(try await local(server, ["list"]).output).isEmpty)
        let synced = try await copy.run(server, ["sync"], environment: ["TIMETRACK_TOKEN": "not-the-servers-token"])
        #expect(synced.status == 0, "\(synced)")
        #expect(names(try await local(server, ["list"]).output) == ["Writing"])
        await server.stop()
    }

    /// A copy following the server (`watch`) shows a change made on the server's side as it happens.
    @Test func aWatchingCopyShowsTheServersChangesAsTheyHappen() async throws {
        let server = Server()
        try await server.start()
        let copy = Copy()
        let watch = try copy.watch(server)
        #expect(await eventually { watch.output.contains("No projects yet") })
        #expect(try await local(server, ["add", "Direct"]).status == 0)
        #expect(await eventually(timeout: .seconds(30)) { watch.output.contains("Direct") }, "\(watch.output)\(watch.errors)")
        watch.signal(SIGINT)
        _ = watch.waitForExit()
        await server.stop()
    }

    /// `--remote` never takes a database that is not its copy: a tracker of its own, or another server's copy, would
    /// be overwritten with the server's contents.
    @Test func aDatabaseThatIsNotThisServersCopyIsRefusedAndLeftAlone() async throws {
        let (server, other) = (Server(), Server())
        try await server.start()
        try await other.start()
        let mine = Copy()
        #expect(try await mine.runWithoutRemote(["add", "Precious"]).status == 0)
        let refused = try await mine.run(server, ["list"])
        #expect(refused.status != 0 && refused.errors.contains("not a copy of"), "\(refused)")
        #expect(try await mine.runWithoutRemote(["list"]).output.contains("Precious"))
        let copy = Copy()
        #expect(try await copy.run(server, ["list"]).status == 0)
        let elsewhere = try await copy.run(other, ["list"])
        #expect(elsewhere.status != 0 && elsewhere.errors.contains("is a copy of \(server.url)"), "\(elsewhere)")
        await server.stop()
        await other.stop()
    }

    /// A copy removed or replaced while its outbox stays is refused: a new database's log would give its actions the
    /// ids of actions the server applied already, which it would skip.
    @Test func aCopyRemovedWhileItsOutboxStaysIsRefused() async throws {
        let server = Server()
        try await server.start()
        let copy = Copy()
        #expect(try await copy.run(server, ["add", "Writing"]).status == 0)
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy.database.path + suffix) }
        let refused = try await copy.run(server, ["add", "Reading"])
        #expect(refused.status != 0 && refused.errors.contains("not the copy its outbox"), "\(refused)")
        #expect(names(try await local(server, ["list"]).output) == ["Writing"])
        await server.stop()
    }

    /// An action applied to a copy and not yet handed to its outbox (the command was killed in between) is sent by
    /// the next command, once. Applied to the copy without `--remote`, an action is in exactly that state.
    @Test func anActionLeftInTheCopyIsSentByTheNextCommand() async throws {
        let server = Server()
        try await server.start()
        let copy = Copy()
        #expect(try await copy.run(server, ["add", "Writing"]).status == 0)
        #expect(try await copy.runWithoutRemote(["add", "Left"]).status == 0)
        #expect(try await copy.run(server, ["sync"]).status == 0)
        #expect(try await copy.run(server, ["sync"]).status == 0)
        #expect(names(try await local(server, ["list"]).output) == ["Left", "Writing"])
        await server.stop()
    }

    /// A change too large to push (more than a push carries) is refused when it is made, and undone in the copy:
    /// queued, it would have stopped every later change.
    @Test func aChangeTooLargeToSendIsRefusedAndUndone() async throws {
        let server = Server()
        try await server.start()
        let copy = Copy()
        let file = copy.database.directory.appendingPathComponent("large.jsonl")
        try FileManager.default.createDirectory(at: copy.database.directory, withIntermediateDirectories: true)
        let lines = (0..<6_000).map { #"{"project":"\#(String(repeating: "x", count: 190))\#($0)","created":"2026-11-01T09:00:00Z"}"# }
        try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        let refused = try await copy.run(server, ["import", file.path])
        #expect(refused.status != 0 && refused.errors.contains("too large to send"), "\(refused.errors)")
        #expect(names(try await copy.run(server, ["list"]).output).isEmpty)
        #expect(try await copy.run(server, ["add", "Small"]).status == 0)
        #expect(names(try await local(server, ["list"]).output) == ["Small"])
        await server.stop()
    }

    /// A change dated ahead of the server's clock by more than a few minutes (made on a machine whose clock is a day
    /// ahead) is refused by the server and undone in the copy.
    ///
    /// The change is dated ahead in the copy's outbox, not by running the command under faketime, whose timers the
    /// command's waits (`Task.sleep`) would never see fire (see `FakedClock`).
    @Test func aChangeFromAClockAheadIsRefused() async throws {
        let server = Server()
        try await server.start()
        let copy = Copy()
        #expect(try await copy.run(server, ["add", "Writing"]).status == 0)
        await server.stop()
        #expect(try await copy.run(server, ["start", "Writing"]).status == 0)
        try copy.dateQueuedChanges(aheadBy: 86_400)
        try await server.start()
        let synced = try await copy.run(server, ["sync"])
        #expect(synced.status != 0 && synced.output.contains("ahead of the server's clock"), "\(synced)")
        #expect(!(try await local(server, ["list"]).output.contains("running")))
        #expect(!(try await copy.run(server, ["list"]).output.contains("running")))
        await server.stop()
    }

    /// A copy has one outbox, which one command at a time writes: another command waits for it as for a locked
    /// database, then says which command holds it; once that one ends, it works.
    @Test func aCopyInUseByAnotherCommandIsWaitedForThenNamed() async throws {
        let server = Server()
        try await server.start()
        let copy = Copy()
        let watch = try copy.watch(server)
        #expect(await eventually { watch.output.contains("No projects yet") })
        let waited = try await copy.run(server, ["add", "Writing", "--lock-timeout", "0.3"])
        #expect(waited.status != 0 && waited.errors.contains("Another timetrack command"), "\(waited)")
        watch.signal(SIGINT)
        _ = watch.waitForExit()
        #expect(try await copy.run(server, ["add", "Writing"]).status == 0)
        await server.stop()
    }

    /// A watching copy of a tracker with a running activity rests between changes: the copy's state changes at every
    /// reading then (the elapsed time), and following it, rather than its actions, had each exchange call for another.
    @Test func aWatchingCopyRestsWhileAnActivityRuns() async throws {
        let server = Server()
        try await server.start()
        #expect(try await local(server, ["add", "Writing"]).status == 0)
        #expect(try await local(server, ["start", "Writing"]).status == 0)
        let copy = Copy()
        let watch = try copy.watch(server)
        #expect(await eventually { watch.output.contains("running") })
        let before = try #require(watch.processorSeconds)
        try await Task.sleep(for: .seconds(3))
        let used = try #require(watch.processorSeconds) - before
        // Resting, it uses a few hundredths of a second; spinning, it used a whole processor.
        #expect(used < 1, "\(used) s of processor time in 3 s")
        watch.signal(SIGINT)
        _ = watch.waitForExit()
        await server.stop()
    }

    /// The page's `GET /api/sync`: how many apps sync, how many follow now, and each one's last push.
    @Test func theServerListsTheAppsThatSync() async throws {
        let server = Server()
        try await server.start()
        let (a, b) = (Copy(), Copy())
        #expect(try await a.run(server, ["add", "Writing"]).status == 0)
        #expect(try await b.run(server, ["add", "Reading"]).status == 0)
        let token = try String(contentsOfFile: server.tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        var request = URLRequest(url: URL(string: "\(server.url)api/sync")!)
        request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization")
        let (data, _) = try await URLSession.shared.data(for: request)
        struct Answer: Decodable {
            struct Client: Decodable {
                var name: String
                var lastPush: Double
                var actions: Int64
            }
            var hosted: Bool
            var clients: [Client]
            var following: Int
        }
        let answer = try JSONDecoder().decode(Answer.self, from: data)
        #expect(answer.hosted && answer.clients.count == 2 && answer.clients.allSatisfy { $0.actions == 1 })
        let (refused, response) = try await URLSession.shared.data(from: URL(string: "\(server.url)api/sync")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 401 && !String(decoding: refused, as: UTF8.self).contains("clients"))
        await server.stop()
    }

    /// `serve --token-file` makes the file owner-only; a client refuses one that others may read.
    @Test func aTokenFileIsTheOwnersOnly() async throws {
        let server = Server()
        try await server.start()
        let attributes = try FileManager.default.attributesOfItem(atPath: server.tokenFile)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: server.tokenFile)
        let refused = try await Copy().run(server, ["list"])
        #expect(refused.status != 0 && refused.errors.contains("chmod 600"), "\(refused)")
        await server.stop()
    }

    @Test func commandsThatMustRunWhereTheDatabaseIsRefuseRemote() async throws {
        for arguments in [
            ["serve", "--remote", "http://127.0.0.1:1/"], ["record", "session.jsonl", "--remote", "http://127.0.0.1:1/"],
            ["sync"], ["list", "--remote", "ftp://example.com/"], ["list", "--remote", "http://127.0.0.1:1/#token=x"],
        ] {
            let run = try await offThePool { try TimetrackProcess.run(arguments) }
            #expect(run.status == 64, "\(arguments): \(run)")
        }
    }
}
