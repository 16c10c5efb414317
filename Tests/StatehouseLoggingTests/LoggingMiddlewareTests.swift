import Logging
import Statehouse
import StatehouseLogging
import Synchronization
import Testing

/// A swift-log handler that keeps what it is given.
final class CapturingHandler: LogHandler, Sendable {
    struct Entry: Sendable, Equatable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
    }

    let entries = Mutex<[Entry]>([])
    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }
    var logLevel: Logger.Level {
        get { .trace }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        let entry = Entry(
            level: event.level, message: "\(event.message)",
            metadata: (event.metadata ?? [:]).mapValues { "\($0)" }
        )
        entries.withLock { $0.append(entry) }
    }
}

struct Tally: Equatable, Sendable {
    var count = 0
}

@Suite("Logging middleware")
struct LoggingMiddlewareTests {
    @Test func logsEachActionAndOptionallyTheState() {
        let handler = CapturingHandler()
        let logger = Logger(label: "test.store") { _ in handler }
        let store = Store(
            initialState: Tally(),
            reducer: { (state: inout Tally, amount: Int) in state.count += amount },
            middleware: [.logging(logger, level: .info, includeState: true)]
        )
        store.dispatch(2)
        let entries = handler.entries.withLock { $0 }
        #expect(entries == [
            .init(level: .info, message: "action", metadata: ["action": "2"]),
            .init(level: .info, message: "state", metadata: ["action": "2", "state": "Tally(count: 2)"]),
        ])
    }
}
