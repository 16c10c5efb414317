import Logging
import Statehouse

/// A swift-log handler that keeps what it is given, from any thread.
///
/// On `Locked` rather than `Mutex`: ThreadSanitizer cannot see `Mutex` on Linux and would report false races.
public final class CapturingLogHandler: LogHandler, Sendable {
    public struct Entry: Sendable, Equatable {
        public var level: Logger.Level
        public var message: String
        public var metadata: [String: String]

        public init(level: Logger.Level, message: String, metadata: [String: String]) {
            self.level = level
            self.message = message
            self.metadata = metadata
        }
    }

    private let storage = Locked<[Entry]>([])

    public init() {}

    /// What was logged so far, in order.
    public var entries: [Entry] {
        storage.withLock { $0 }
    }

    public var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    public var logLevel: Logger.Level {
        get { .trace }
        set {}
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    public func log(event: LogEvent) {
        let entry = Entry(
            level: event.level, message: "\(event.message)",
            metadata: (event.metadata ?? [:]).mapValues { "\($0)" }
        )
        storage.withLock { $0.append(entry) }
    }
}
