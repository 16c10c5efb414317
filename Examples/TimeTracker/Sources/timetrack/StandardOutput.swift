import ArgumentParser
import Foundation

/// Where every command writes its results: standard output, unbuffered, so that a reader on a pipe (a test, a
/// script, `timetrack watch | …`) sees each write at once.
///
/// Written with `write(2)`, not `FileHandle`, whose failures trap: a reader that goes away (`timetrack list | head -1`)
/// or a full disk must end the command like any Unix tool does, not crash it. Failures of the commands themselves
/// never go here: commands throw them, and ArgumentParser prints them on standard error with a failing status.
enum StandardOutput {
    /// Why standard output could not take a write.
    struct Failure: Error, CustomStringConvertible {
        let code: Int32

        /// The reader closed its end (`EPIPE`): nobody wants the rest.
        var readerLeft: Bool { code == EPIPE }

        var description: String { "could not write to standard output: \(String(cString: strerror(code)))" }
    }

    /// Writes `text` for a command that only shows something: a reader that left ends the command quietly with the
    /// status of a process killed by `SIGPIPE` (141, what shells expect of a writer `head` stopped reading); any
    /// other failure is an error (`Error: …` on standard error, status 1).
    static func show(_ text: String) throws {
        do {
            try write(text, to: STDOUT_FILENO)
        } catch where error.readerLeft {
            throw ExitCode(128 + SIGPIPE)
        }
    }

    /// Writes `text`, the report of a change already committed. If it cannot be written, the report goes to standard
    /// error with the reason, and the command still succeeds: a script must not be led to retry a change that was made.
    static func report(_ text: String) {
        do {
            try write(text, to: STDOUT_FILENO)
        } catch {
            warn("\(text.trimmingCharacters(in: .newlines)) (\(error))")
        }
    }

    /// Writes a line on standard error, for what the user should know but is not the command's result.
    static func warn(_ text: String) {
        try? write("Note: \(text)\n", to: STDERR_FILENO)
    }

    /// Run first: a process started with standard output closed (`timetrack watch >&-`) would hand descriptor 1 to
    /// the next file it opens, and what it prints would land there. Each missing standard descriptor is held by
    /// `/dev/null` opened read-only, so that writing to it fails (`EBADF`) as writing to a closed one does.
    static func holdClosedStandardDescriptors() {
        for descriptor in [STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO] where fcntl(descriptor, F_GETFD) == -1 {
            // `open` takes the lowest free descriptor: this one, since those below it are open by now.
            let placeholder = open("/dev/null", O_RDONLY)
            if placeholder >= 0, placeholder != descriptor {
                dup2(placeholder, descriptor)
                close(placeholder)
            }
        }
    }

    /// A closed pipe then fails `write` with `EPIPE`, instead of sending a signal that ends the process mid-command.
    private static let brokenPipeSignalIgnored: Void = { _ = signal(SIGPIPE, SIG_IGN) }()

    private static func write(_ text: String, to descriptor: Int32) throws(Failure) {
        _ = brokenPipeSignalIgnored
        var bytes = Array(text.utf8)[...]
        while !bytes.isEmpty {
            let written = bytes.withUnsafeBytes { systemWrite(descriptor, $0.baseAddress, $0.count) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(code: errno)
            }
            bytes = bytes.dropFirst(written)
        }
    }
}

#if canImport(Glibc)
import Glibc
private let systemWrite = Glibc.write
#elseif canImport(Darwin)
import Darwin
private let systemWrite = Darwin.write
#endif
