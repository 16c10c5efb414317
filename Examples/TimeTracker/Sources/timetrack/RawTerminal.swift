import Foundation

/// The terminal as a full-screen view wants it: keys arrive one by one, unechoed; the view draws on the alternate
/// screen, without a cursor. ``restore()`` gives the terminal back as it was, and every way `watch` ends calls it:
/// `q`, Ctrl-C, a `kill`, a hang-up, an error.
final class RawTerminal: Sendable {
    /// A key `watch` acts on.
    enum Key: Sendable {
        case up, down, toggle, undo, quit
    }

    private let original: termios

    /// Takes the terminal, or returns `nil` when standard input or output is not one.
    init?() {
        guard isatty(STDIN_FILENO) == 1, isatty(STDOUT_FILENO) == 1 else { return nil }
        var settings = termios()
        guard tcgetattr(STDIN_FILENO, &settings) == 0 else { return nil }
        original = settings
        // Keys one by one, unechoed, and Ctrl-C, Ctrl-\ and Ctrl-Z as keys rather than signals: a SIGQUIT or a
        // SIGTSTP would leave the terminal raw. Signals from elsewhere (a kill, a hang-up) `watch` catches.
        settings.c_lflag &= ~tcflag_t(ICANON | ECHO | ISIG)
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
        try? StandardOutput.show("\u{1B}[?1049h\u{1B}[?25l")
    }

    /// Leaves the alternate screen, shows the cursor, and puts the terminal's settings back.
    func restore() {
        try? StandardOutput.show("\u{1B}[?25h\u{1B}[?1049l")
        var settings = original
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings)
    }

    /// The keys typed, read on a thread of their own (a read blocks until a key comes).
    func keys() -> AsyncStream<Key> {
        AsyncStream { continuation in
            let reader = Thread {
                var pending: [UInt8] = []
                var byte: UInt8 = 0
                while read(STDIN_FILENO, &byte, 1) == 1 {
                    pending.append(byte)
                    if let (key, used) = Self.key(in: pending) {
                        pending.removeFirst(used)
                        if let key { continuation.yield(key) }
                    }
                }
                continuation.finish()
            }
            reader.start()
        }
    }

    /// The key at the start of `bytes` and how many bytes it took (`nil` for a key `watch` ignores); `nil` when an
    /// escape sequence is not whole yet.
    static func key(in bytes: [UInt8]) -> (Key?, Int)? {
        guard let first = bytes.first else { return nil }
        if first == 0x1B {
            // ESC [ A is up, ESC [ B is down; an ESC alone is dropped, and what follows it read as keys.
            if bytes.count >= 2, bytes[1] != UInt8(ascii: "[") { return (nil, 1) }
            guard bytes.count >= 3 else { return nil }
            switch bytes[2] {
            case UInt8(ascii: "A"): return (.up, 3)
            case UInt8(ascii: "B"): return (.down, 3)
            default: return (nil, 3)
            }
        }
        switch first {
        case UInt8(ascii: "k"): return (.up, 1)
        case UInt8(ascii: "j"): return (.down, 1)
        case UInt8(ascii: " "), UInt8(ascii: "\r"), UInt8(ascii: "\n"), UInt8(ascii: "s"): return (.toggle, 1)
        case UInt8(ascii: "u"): return (.undo, 1)
        // q, Ctrl-C, Ctrl-\.
        case UInt8(ascii: "q"), 0x03, 0x1C: return (.quit, 1)
        default: return (nil, 1)
        }
    }
}
