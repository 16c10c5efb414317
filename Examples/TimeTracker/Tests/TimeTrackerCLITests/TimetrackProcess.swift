import Foundation
import Testing
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
    /// What it was started with, to name it when it hangs.
    private let command: String
    private let collectedOutput = CollectedText()
    private let collectedErrors = CollectedText()
    /// The pipes' ends this process reads, to collect what is left in them once `timetrack` exited.
    private let outputHandle: FileHandle?
    private let errorsHandle: FileHandle

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
        command = (["timetrack"] + arguments).joined(separator: " ")
        let stderr = Pipe()
        if let standardOutput {
            process.standardOutput = standardOutput
            outputHandle = nil
        } else {
            let stdout = Pipe()
            process.standardOutput = stdout
            outputHandle = stdout.fileHandleForReading
            collectedOutput.startReading(stdout.fileHandleForReading)
        }
        process.standardError = stderr
        process.standardInput = FileHandle.nullDevice
        errorsHandle = stderr.fileHandleForReading
        collectedErrors.startReading(stderr.fileHandleForReading)
        try processSpawning.withLock { try process.run() }
    }

    /// Runs `timetrack arguments…` to the end.
    static func run(
        _ arguments: [String], environment: [String: String] = [:], standardOutput: Any? = nil
    ) throws -> (status: Int32, output: String, errors: String) {
        let process = try TimetrackProcess(arguments, environment: environment, standardOutput: standardOutput)
        let status = process.waitForExit()
        return (status, process.output, process.errors)
    }

    /// Starts `timetrack serve --port PORT arguments…` (any free port for 0) and waits for the port it prints.
    static func serve(
        _ arguments: [String], port: Int = 0, shellPrefix: String? = nil
    ) async throws -> (server: TimetrackProcess, port: Int) {
        let server = try TimetrackProcess(["serve", "--port", "\(port)"] + arguments, shellPrefix: shellPrefix)
        let serving = #/timetrack is serving http://[^ ]*:(\d+)/#
        guard await eventually({ server.output.contains(serving) }),
              let match = server.output.firstMatch(of: serving), let port = Int(match.1)
        else {
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "no server: \(server.errors)"])
        }
        return (server, port)
    }

    var output: String { collectedOutput.text }
    var errors: String { collectedErrors.text }

    /// Waits until `timetrack` exited, then collects what its pipes still hold: all it wrote is then in ``output``
    /// and ``errors``. One that has not ended within two minutes hangs: it is killed, and the test fails.
    func waitForExit() -> Int32 {
        if !process.waitForExit() {
            Issue.record("`\(command)` did not end within two minutes and was killed. Its standard error: \(errors)")
        }
        // The readers may not have read the last output yet. Not waiting for them to see the pipes' ends: a process
        // started meanwhile by another test could inherit a pipe's writing end and keep it from ending.
        if let outputHandle { collectedOutput.finish(from: outputHandle) }
        collectedErrors.finish(from: errorsHandle)
        return process.terminationStatus
    }

    /// The processor time `timetrack` used so far, user and system, in seconds (Linux's `/proc/PID/stat`).
    var processorSeconds: Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/stat", encoding: .utf8),
              let afterName = stat.range(of: ") ")
        else { return nil }
        // After the name: state is field 3, utime 14 and stime 15.
        let fields = stat[afterName.upperBound...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func signal(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    deinit {
        if process.isRunning { process.terminate() }
    }
}

/// What a pipe delivered so far, read as it comes by a thread of its own, then, once the writer exited, what the
/// pipe still held.
///
/// A thread that polls, not `FileHandle.readabilityHandler`: on Linux that handler is a dispatch source, and a pipe
/// closed while its source was still being cancelled crashed the test process in libdispatch's event loop
/// (`_dispatch_event_loop_drain`). The thread holds the handle, so the pipe is closed only once it stopped reading.
///
/// On `NSLock` (a pthread mutex), which ThreadSanitizer sees, unlike `Mutex` on Linux.
final class CollectedText: @unchecked Sendable {
    private let lock = NSLock()
    /// Guarded by `lock`.
    private var collected = Data()
    /// Guarded by `lock`: set by ``finish(from:)``, after which the reader stops.
    private var isFinished = false
    /// Signalled when the reader stopped.
    private let readerStopped = DispatchSemaphore(value: 0)

    var text: String {
        lock.lock()
        defer { lock.unlock() }
        return String(decoding: collected, as: UTF8.self)
    }

    /// Reads `handle` on a thread of its own until the pipe's end or ``finish(from:)``.
    func startReading(_ handle: FileHandle) {
        Thread { [self] in
            readUntilFinished(handle)
            readerStopped.signal()
        }.start()
    }

    private func readUntilFinished(_ handle: FileHandle) {
        let descriptor = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            lock.lock()
            let finished = isFinished
            lock.unlock()
            if finished { return }
            var readable = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            // Wakes now and then to see whether it is finished: a pipe's end may never come (see `waitForExit`).
            let ready = poll(&readable, 1, 50)
            if ready == 0 || (ready == -1 && errno == EINTR) { continue }
            guard ready == 1 else { return }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == -1 && errno == EINTR { continue }
            guard count > 0 else { return }  // the end, or an error
            lock.lock()
            collected.append(contentsOf: buffer[..<count])
            lock.unlock()
        }
    }

    /// Once the process writing to the pipe exited (so that all it wrote is in the pipe): stops the reader and takes
    /// what the pipe still holds, without waiting for the pipe's end.
    func finish(from handle: FileHandle) {
        lock.lock()
        isFinished = true
        lock.unlock()
        readerStopped.wait()
        lock.lock()
        defer { lock.unlock() }
        let descriptor = handle.fileDescriptor
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var readable = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&readable, 1, 0)
            if ready == -1 && errno == EINTR { continue }
            guard ready == 1 else { return }  // empty: everything written was taken
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count == -1 && errno == EINTR { continue }
            guard count > 0 else { return }  // the end, or an error
            collected.append(contentsOf: buffer[..<count])
        }
    }
}
