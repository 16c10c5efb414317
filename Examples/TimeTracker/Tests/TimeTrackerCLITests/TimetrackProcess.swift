import Foundation
import Synchronization
import TimeTrackerTestSupport

/// The built `timetrack` executable, run as a user would, with its output collected as it comes.
final class TimetrackProcess {
    /// Next to the test bundle, in the build folder.
    static var executable: URL {
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("timetrack")
    }

    private let process = Process()
    private let collectedOutput = CollectedText()
    private let collectedErrors = CollectedText()

    /// Starts `timetrack arguments…`; `environment` is added to the test's own. Its standard output is collected,
    /// unless `standardOutput` (a `FileHandle` or a `Pipe`) is given. With `shellPrefix`, a shell runs that first
    /// (`ulimit -n 128`, say), then `timetrack` in its place.
    init(
        _ arguments: [String], environment: [String: String] = [:], standardOutput: Any? = nil, shellPrefix: String? = nil
    ) throws {
        if let shellPrefix {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "\(shellPrefix); exec \"$0\" \"$@\"", Self.executable.path] + arguments
        } else {
            process.executableURL = Self.executable
            process.arguments = arguments
        }
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let stderr = Pipe()
        if let standardOutput {
            process.standardOutput = standardOutput
        } else {
            let stdout = Pipe()
            process.standardOutput = stdout
            stdout.fileHandleForReading.readabilityHandler = { [collectedOutput] in collectedOutput.append($0.availableData) }
        }
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        stderr.fileHandleForReading.readabilityHandler = { [collectedErrors] in collectedErrors.append($0.availableData) }
        try process.run()
    }

    /// Runs `timetrack arguments…` to the end.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], standardOutput: Any? = nil
    ) throws -> (status: Int32, output: String, errors: String) {
        let process = try TimetrackProcess(arguments, environment: environment, standardOutput: standardOutput)
        let status = process.waitForExit()
        return (status, process.output, process.errors)
    }

    /// Starts `timetrack serve --port 0 arguments…` and waits for the port it prints.
    static func serve(_ arguments: [String], shellPrefix: String? = nil) async throws -> (server: TimetrackProcess, port: Int) {
        let server = try TimetrackProcess(["serve", "--port", "0"] + arguments, shellPrefix: shellPrefix)
        let serving = #/timetrack is serving http://[^ ]*:(\d+)/#
        guard await eventually(timeout: .seconds(30), { server.output.contains(serving) }),
              let match = server.output.firstMatch(of: serving), let port = Int(match.1)
        else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no server: \(server.errors)"])
        }
        return (server, port)
    }

    var output: String { collectedOutput.text }
    var errors: String { collectedErrors.text }

    func waitForExit() -> Int32 {
        process.waitUntilExit()
        // The pipes may still hold the last output: drain them.
        Thread.sleep(forTimeInterval: 0.05)
        return process.terminationStatus
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// What a pipe delivered so far, from the thread that reads it.
final class CollectedText: Sendable {
    private let collected = Mutex("")

    var text: String { collected.withLock { $0 } }

    func append(_ data: Data) {
        collected.withLock { $0 += String(decoding: data, as: UTF8.self) }
    }
}
