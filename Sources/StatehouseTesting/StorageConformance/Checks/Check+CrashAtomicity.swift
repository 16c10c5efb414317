import Foundation
import Statehouse

extension StorageConformance.Check {
    /// A process killed (`SIGKILL`) at a random instant while it saves leaves the key holding a whole counter, never
    /// less than the last one seen, and the storage usable: for storages that promise crash atomicity.
    ///
    /// Each round starts `writer`, waits for its first save, kills it 1 to 20 ms later and loads the key through a
    /// new instance. Add it to the other checks:
    ///
    /// ```swift
    /// static let writer = StorageConformance.CrashWriter(executable: writerURL) { place, key, parent in
    ///     [place.directory.path, key, String(parent)]
    /// }
    ///
    /// @Test(arguments: StorageConformance.checks + [.crashAtomicity(writer: writer)])
    /// func conforms(_ check: StorageConformance.Check) async throws { … }
    /// ```
    ///
    /// - Parameters:
    ///   - writer: The program that saves the counter; see ``StorageConformance/CrashWriter``.
    ///   - rounds: How many times to start and kill it.
    public static func crashAtomicity(writer: StorageConformance.CrashWriter, rounds: Int = 50) -> Self {
        Self(
            id: "crashAtomicity",
            name: "crash atomicity: a writer killed at any instant leaves a whole value, never an older one"
        ) { subject in
            let key = "conformance.crash"
            let failures = FailureLog()
            let loop = CrashLoop(
                writer: writer,
                arguments: writer.arguments(subject.place, key, ProcessInfo.processInfo.processIdentifier),
                key: key, rounds: rounds, subject: subject, failures: failures
            )
            // Blocking: it waits for processes and sleeps between start and kill.
            await onThreads(1) { _ in loop.run() }
            failures.record(in: subject)
            let storage = try subject.instance()
            try storage.save(Data("0".utf8), key)
            try subject.expect(
                storage, loads: Data("0".utf8), for: key, "After the crashes, a save of the key does not load back.")
        }
    }
}

/// The rounds of the crash check, on a thread of their own; failures go to `failures`.
private struct CrashLoop: Sendable {
    let writer: StorageConformance.CrashWriter
    let arguments: [String]
    let key: String
    let rounds: Int
    let subject: ConformanceSubject
    let failures: FailureLog

    /// How long a writer may take to save its first value: generous, for a machine running many tests at once.
    private static let readyTimeout: Duration = .seconds(60)

    func run() {
        var lastSeen = Int.min
        for round in 1...max(rounds, 1) {
            guard let value = runRound(round) else { return }
            if value < lastSeen {
                return failures.append("Round \(round): the stored counter went back from \(lastSeen) to \(value).")
            }
            lastSeen = value
        }
    }

    /// Starts the writer, kills it, and returns the counter stored then; `nil` after a failure.
    private func runRound(_ round: Int) -> Int? {
        let process = Process()
        process.executableURL = writer.executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        do {
            try process.run()
        } catch {
            failures.append("Could not start the crash writer \(writer.executable.path): \(error).")
            return nil
        }
        let ready = waitForLine(from: output.fileHandleForReading)
        usleep(UInt32.random(in: 1_000...20_000))
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        guard ready, process.terminationReason == .uncaughtSignal else {
            let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile().prefix(500), as: UTF8.self)
            failures.append(
                """
                Round \(round): the crash writer \(ready ? "exited (status \(process.terminationStatus)) before it was killed" : "did not print a line: it ended, or was silent for \(Self.readyTimeout)"). \
                Its standard error: \(said.isEmpty ? "nothing" : said)
                """)
            return nil
        }
        return storedCounter(round)
    }

    /// The counter the key holds, loaded by a new instance; `nil` (with a failure) if there is none or it is torn.
    private func storedCounter(_ round: Int) -> Int? {
        let data: Data?
        do {
            data = try subject.makeStorage(subject.place).load(key: key)
        } catch {
            failures.append("Round \(round): \(StorageProbe.failure(of: "load", key: key, error: error))")
            return nil
        }
        guard let data else {
            failures.append("Round \(round): nothing stored, though the writer said it had saved.")
            return nil
        }
        guard let value = Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
        else {
            failures.append("Round \(round): the stored value is torn: \(data.count) bytes that are not a counter.")
            return nil
        }
        return value
    }

    /// Whether `handle` gave a whole line before the timeout (and not the end of the stream).
    private func waitForLine(from handle: FileHandle) -> Bool {
        let deadline = ContinuousClock.now + Self.readyTimeout
        var received = Data()
        while !received.contains(UInt8(ascii: "\n")) {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            var descriptor = pollfd(fd: handle.fileDescriptor, events: Int16(POLLIN), revents: 0)
            let milliseconds = Int32(
                left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000)
            let ready = poll(&descriptor, 1, max(milliseconds, 1))
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else { return false }
            let chunk = handle.availableData
            guard !chunk.isEmpty else { return false }
            received.append(chunk)
        }
        return true
    }
}
