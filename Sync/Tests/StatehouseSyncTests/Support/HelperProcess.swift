import Foundation
import StatehouseTestSupport
import Synchronization

/// Another process of a test: one of this package's worker executables or a program of the system, its output read
/// line by line as it comes, killed (SIGKILL) when the test says so or when it is let go.
final class HelperProcess: Sendable {
    private let process: Process
    /// The lines read so far, and whether the output ended (every line is in).
    private let output = Mutex<(lines: [String], ended: Bool)>(([], false))

    /// - Parameter namespace: The network namespace to run it in (`ip netns exec` enters it, then becomes the
    ///   worker: the process is the worker's own).
    convenience init(_ name: String, _ arguments: [String], namespace: String? = nil) throws {
        if let namespace {
            try self.init(
                executable: NetworkNamespace.ip, ["netns", "exec", namespace, helperExecutable(named: name).path] + arguments
            )
        } else {
            try self.init(executable: helperExecutable(named: name), arguments)
        }
    }

    init(executable: URL, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        self.process = process
        let reader = pipe.fileHandleForReading
        try process.run()
        // A thread of its own: reading blocks until the process writes or ends.
        Thread.detachNewThread { [weak self] in
            var pending = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty {
                    // A last line without its line break is a line too.
                    let last = pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
                    self?.output.withLock { output in
                        if let last { output.lines.append(last) }
                        output.ended = true
                    }
                    return
                }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                    pending.removeSubrange(pending.startIndex...newline)
                    self?.output.withLock { $0.lines.append(line) }
                }
            }
        }
    }

    deinit {
        kill()
    }

    var lines: [String] {
        output.withLock { $0.lines }
    }

    /// Waits for a line that `matches`, and returns it; `nil` if the process ended or the deadline passed first.
    func line(where matches: @escaping (String) -> Bool) async -> String? {
        var found: String?
        _ = await eventually {
            found = lines.first(where: matches)
            return found != nil || !process.isRunning
        }
        return found ?? lines.first(where: matches)
    }

    func kill() {
        if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    }

    /// Waits for the process to end and its output to be read, and returns its exit status (`nil` if a signal ended
    /// it).
    func exitStatus() async -> Int32? {
        _ = await eventually { !process.isRunning && output.withLock { $0.ended } }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }
}
