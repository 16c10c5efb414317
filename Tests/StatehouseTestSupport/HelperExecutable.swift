import Foundation

/// A helper executable of this package (the other process of a test), built in the same folder as the tests.
public func helperExecutable(named name: String) -> URL {
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    while !directory.path.hasSuffix("/debug") && !directory.path.hasSuffix("/release") && directory.path != "/" {
        directory.deleteLastPathComponent()
    }
    return directory.appendingPathComponent(name)
}

/// Runs the helper executable `name` (another process of a test) with `arguments`, and waits for it to end.
///
/// - Returns: Whether it succeeded (one still running after two minutes hangs: it is killed, and did not).
public func runHelper(_ name: String, _ arguments: [String]) async throws -> Bool {
    try await offThePool {
        let process = Process()
        process.executableURL = helperExecutable(named: name)
        process.arguments = arguments
        try process.run()
        return process.waitForExit() && process.terminationReason == .exit && process.terminationStatus == 0
    }
}

/// Starts the helper executable `name` with `arguments`, waits for its first output (it prints "ready" once it has
/// written), lets it run a random 1–20 ms more, kills it with SIGKILL and waits for its end.
///
/// - Returns: Whether the signal ended it (`false`: it ended by itself, so it could not do its work).
public func killHelperAtARandomInstant(_ name: String, _ arguments: [String]) async throws -> Bool {
    try await offThePool {
        let process = Process()
        process.executableURL = helperExecutable(named: name)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        _ = output.fileHandleForReading.availableData  // "ready"
        usleep(UInt32.random(in: 1_000...20_000))  // a random instant to kill it at, not a wait for a signal
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return process.terminationReason == .uncaughtSignal
    }
}

extension Process {
    /// Waits for the process to end, for at most `timeout`; one still running then is killed (SIGKILL) with every
    /// process it started, and reaped. A test that runs a program must fail when the program hangs, not hang with it.
    ///
    /// - Returns: Whether it ended by itself within `timeout`.
    public func waitForExit(within timeout: Duration = .seconds(120)) -> Bool {
        let deadline = ContinuousClock.now + timeout
        // Foundation's own `waitUntilExit` polls too, with no deadline.
        while isRunning && ContinuousClock.now < deadline { usleep(5_000) }
        guard isRunning else { return true }
        // Its descendants first, while they are still its: a wrapper such as `faketime` waits for the program it
        // started, which killing the wrapper alone would leave running.
        for pid in descendants(of: processIdentifier) + [processIdentifier] { kill(pid, SIGKILL) }
        // Foundation on Linux sees the end once every process holding the child's descriptors ended: one started by
        // a descendant may hold them still, so this wait has its deadline too.
        let reaping = ContinuousClock.now + .seconds(10)
        while isRunning && ContinuousClock.now < reaping { usleep(5_000) }
        return false
    }
}

/// The processes `pid` started, and theirs, from Linux's `/proc/PID/task/TID/children`.
private func descendants(of pid: pid_t) -> [pid_t] {
    let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    let children = threads.flatMap { thread in
        ((try? String(contentsOfFile: "/proc/\(pid)/task/\(thread)/children", encoding: .utf8)) ?? "")
            .split(separator: " ").compactMap { pid_t($0) }
    }
    return children + children.flatMap(descendants(of:))
}
