import Foundation
import StatehouseTestSupport
import Testing

/// 100,000 actions with a page attached that has stopped reading: the process's memory stays bounded (the log is a
/// ring, the intake and each page's buffer are bounded), measured in a process of its own, the demo program, so that
/// the other tests' allocations do not count.
@Suite("The inspector's memory is bounded", .serialized)
struct InspectorMemoryTests {
    @Test func aHundredThousandActionsWithAStalledPageKeepTheMemoryBounded() async throws {
        let (warm, after) = try await offThePool { () throws -> (Int, Int) in
            let demo = try DemoProcess(arguments: ["1000"])
            defer { demo.stop() }
            guard let url = URL(string: demo.url), let port = url.port else { throw CocoaError(.fileReadCorruptFile) }
            let stalled = try RawConnection(port: port, receiveBuffer: 4_096)
            stalled.send("GET \(url.path)/api/events?since=0 HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\r\n")
            // Warm up: the ring fills, the page's buffer fills and the page is cut off.
            try demo.command("flood 20000")
            let warm = try demo.residentKiB()
            try demo.command("flood 100000")
            return (warm, try demo.residentKiB())
        }
        // Unbounded, the log alone would hold 100,000 more entries (several hundred bytes each): tens of MiB.
        #expect(warm > 0)
        // Under ThreadSanitizer the demo is instrumented too, and its shadow memory grows with what it touches: the
        // bound is scaled by the shadow's size (about four bytes for each byte of the program).
        let bound = (isUnderThreadSanitizer ? 5 : 1) * 24 * 1024
        #expect(after - warm < bound, "grew from \(warm) KiB to \(after) KiB")
    }
}

/// The demo program (`StatehouseInspectorDemo`), driven through its standard input.
final class DemoProcess {
    let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = ""
    let url: String

    init(arguments: [String]) throws {
        process.executableURL = helperExecutable(named: "StatehouseInspectorDemo")
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        try process.run()
        url = String(try Self.line(from: output, buffered: &buffered).dropFirst("url ".count))
    }

    /// Sends `command`, and waits for its `ok` (what it printed before is returned).
    @discardableResult
    func command(_ command: String) throws -> [String] {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
        var lines: [String] = []
        while true {
            let line = try Self.line(from: output, buffered: &buffered)
            if line == "ok" { return lines }
            lines.append(line)
        }
    }

    func residentKiB() throws -> Int {
        let lines = try command("rss")
        return Int(lines.first { $0.hasPrefix("rss ") }?.dropFirst(4) ?? "") ?? 0
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    private static func line(from pipe: Pipe, buffered: inout String) throws -> String {
        while !buffered.contains("\n") {
            // read(2), not `availableData`: Foundation stops the process when a read is interrupted by a signal
            // (EINTR), which other tests' processes send this one (SIGCHLD).
            var bytes = [UInt8](repeating: 0, count: 4_096)
            let count = read(pipe.fileHandleForReading.fileDescriptor, &bytes, bytes.count)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw CocoaError(.fileReadUnknown) }
            buffered += String(decoding: bytes[..<count], as: UTF8.self)
        }
        let end = buffered.firstIndex(of: "\n")!
        defer { buffered = String(buffered[buffered.index(after: end)...]) }
        return String(buffered[..<end])
    }
}
