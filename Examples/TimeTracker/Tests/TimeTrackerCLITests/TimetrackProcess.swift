import Foundation
import Synchronization

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
    /// unless `standardOutput` (a `FileHandle` or a `Pipe`) is given.
    init(_ arguments: [String], environment: [String: String] = [:], standardOutput: Any? = nil) throws {
        process.executableURL = Self.executable
        process.arguments = arguments
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
