import Foundation
import Testing
import TimeTrackerCore
import TimeTrackerTestSupport

/// `timetrack watch` in a real terminal (tmux): keys start and stop the selected project, and the terminal is given
/// back as it was however the view ends.
@Suite("watch in a terminal", .serialized, .enabled(if: Tmux.isAvailable, "needs tmux: apt-get install tmux"))
struct WatchTerminalTests {
    /// The terminal's settings, as `stty -g` prints them in the shell, written to a file the test reads.
    private static func settings(_ terminal: Tmux, in directory: URL, _ name: String) async throws -> String {
        let file = directory.appendingPathComponent(name)
        try terminal.send("stty -g > \(file.path)", "Enter")
        #expect(await eventually { ((try? String(contentsOf: file, encoding: .utf8)) ?? "").hasSuffix("\n") })
        return try String(contentsOf: file, encoding: .utf8)
    }

    private static func running(_ database: TemporaryDatabase) throws -> [String] {
        let listed = try JSONDecoder().decode(
            [ProjectPayload].self, from: Data(try TimetrackProcess.run(["list", "--json", "--db", database.path]).output.utf8)
        )
        return listed.filter(\.running).map(\.name)
    }

    @Test func keysStartAndStopTheSelectedProjectAndQuitGivesTheTerminalBack() async throws {
        let database = TemporaryDatabase()
        for name in ["Writing", "Reading"] { _ = try TimetrackProcess.run(["add", name, "--db", database.path]) }
        let terminal = try Tmux()
        let before = try await Self.settings(terminal, in: database.directory, "before")
        try terminal.send("\(TimetrackProcess.executable.path) watch --db \(database.path)", "Enter")
        #expect(await eventually { terminal.screen().contains("q quits") && terminal.screen().contains("> Reading") })
        try terminal.send("Space")
        #expect(await eventually { (try? Self.running(database)) == ["Reading"] })
        #expect(await eventually { terminal.screen().contains("Started \"Reading\".") })
        try terminal.send("j")
        try terminal.send("Space")
        #expect(await eventually { (try? Self.running(database)) == ["Reading", "Writing"] })
        try terminal.send("u")
        #expect(await eventually { (try? Self.running(database)) == ["Reading"] })
        // A change from elsewhere shows, and the selection stays on its project.
        _ = try TimetrackProcess.run(["add", "Exercise", "--db", database.path])
        #expect(await eventually { terminal.screen().contains("Exercise") && terminal.screen().contains("> Writing") })
        try terminal.send("q")
        // Typed before `watch` has exited, the next keys would go to its reader, not to the shell.
        #expect(await eventually { !terminal.screen().contains("q quits") && terminal.foreground() == "bash" })
        #expect(try await Self.settings(terminal, in: database.directory, "after") == before)
    }

    /// Ctrl-C and Ctrl-\ end the view as `q` does (they are keys to it, not signals, which would leave the terminal
    /// raw): the terminal is the shell's again, echo and line editing on.
    @Test(arguments: ["C-c", "C-\\"])
    func controlKeysGiveTheTerminalBackToo(key: String) async throws {
        let database = TemporaryDatabase()
        _ = try TimetrackProcess.run(["add", "Writing", "--db", database.path])
        let terminal = try Tmux()
        let before = try await Self.settings(terminal, in: database.directory, "before")
        try terminal.send("\(TimetrackProcess.executable.path) watch --db \(database.path)", "Enter")
        #expect(await eventually { terminal.screen().contains("q quits") })
        try terminal.send(key)
        #expect(await eventually { !terminal.screen().contains("q quits") && terminal.foreground() == "bash" })
        #expect(try await Self.settings(terminal, in: database.directory, "after") == before)
    }
}
