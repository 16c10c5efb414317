import Foundation
import TimeTrackerTestSupport

/// A terminal for tests: a shell in a tmux session on a server of its own (`-L`), so that a user's tmux is never
/// touched; keys are sent with `send-keys`, the screen read with `capture-pane`.
final class Tmux {
    static let isAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/tmux")

    private let socket = "timetrack-test-\(UUID().uuidString.prefix(8))"
    /// The tmux server's process and its socket's path, which the terminal removes when it goes.
    private var server: (pid: pid_t, socketPath: String)?

    /// Starts a shell 100 columns by 30 rows, without the user's start-up files.
    init() throws {
        // The server it starts keeps whatever it was given as standard output: not a pipe the test would read to its end.
        try tmux(["new-session", "-d", "-s", "test", "-x", "100", "-y", "30", "bash --norc --noprofile"], reading: false)
        let description = try tmux(["display-message", "-p", "#{pid} #{socket_path}"])
            .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ", maxSplits: 1)
        if description.count == 2, let pid = pid_t(description[0]) { server = (pid, String(description[1])) }
    }

    /// Kills the server rather than asking it to end (`kill-server`): it ends by sending itself SIGTERM, which it
    /// inherits blocked from the test's thread that started it (dispatch's threads block most signals, and
    /// Foundation's `Process` passes the mask on), so it would stay, one more after every test. Its shell then reads
    /// the end of its terminal and exits.
    deinit {
        guard let server else {
            _ = try? tmux(["kill-server"])  // its pid unknown: asking is what is left
            return
        }
        kill(server.pid, SIGKILL)
        unlink(server.socketPath)
    }

    /// Types `keys` (tmux's names: "Enter", "Space", "C-c", or text).
    func send(_ keys: String...) throws {
        try tmux(["send-keys", "-t", "test"] + keys)
    }

    /// The program in the terminal's foreground: "bash" once a command the shell ran has exited.
    func foreground() -> String {
        ((try? tmux(["display-message", "-p", "-t", "test", "#{pane_current_command}"])) ?? "")
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// What the terminal shows now.
    func screen() -> String {
        (try? tmux(["capture-pane", "-p", "-t", "test"])) ?? ""
    }

    @discardableResult
    private func tmux(_ arguments: [String], reading: Bool = true) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/tmux")
        process.arguments = ["-L", socket] + arguments
        let output = Pipe()
        process.standardOutput = reading ? output : FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try processSpawning.withLock { try process.run() }
        let data = reading ? output.fileHandleForReading.readDataToEndOfFile() : Data()
        // Reaped here: Foundation's own watch missed the exit of the client whose server stays (a zombie, and
        // `waitUntilExit` never returned).
        var status: Int32 = 0
        _ = waitpid(process.processIdentifier, &status, 0)
        return String(decoding: data, as: UTF8.self)
    }
}
