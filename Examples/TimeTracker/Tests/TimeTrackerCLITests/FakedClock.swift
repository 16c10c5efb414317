import Foundation
import Testing
import TimeTrackerTestSupport

/// `timetrack` with its wall clock set by Debian's `faketime` (libfaketime), as an NTP step, a laptop resuming or a
/// night the clock changes would set it.
///
/// Only for commands that never wait on a timer: libfaketime moves the absolute deadlines of monotonic timers
/// (`timerfd_settime`) by its offset too, although it leaves the monotonic clock alone, so a `Task.sleep` or a
/// dispatch deadline ends that much late, or never (a deadline moved before the clock's start is refused). A command
/// that hangs is killed after two minutes, and the test fails.
enum FakedClock {
    static let isAvailable = FileManager.default.isExecutableFile(atPath: "/usr/bin/faketime")

    /// Runs `timetrack arguments…` at `time`, in faketime's syntax ("+1h", "-10m", "@2026-10-31 23:00:00"), with
    /// `environment` added to the test's own.
    static func run(at time: String, _ arguments: [String], environment: [String: String] = [:]) throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/faketime")
        process.arguments = ["-f", time, TimetrackProcess.executable.path] + arguments
        process.environment = ProcessInfo.processInfo.environment
            .merging(environment) { $1 }
            .merging(["FAKETIME_DONT_FAKE_MONOTONIC": "1"]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        try processSpawning.withLock { try process.run() }
        if !process.waitForExit() {
            Issue.record("`timetrack \(arguments.joined(separator: " "))` at \(time) did not end within two minutes and was killed.")
        }
        return process.terminationStatus
    }
}
