import Logging
import Statehouse
import StatehouseLogging
import StatehouseTestSupport
import Testing

struct Tally: Equatable, Sendable {
    var count = 0
}

@Suite("Logging middleware")
struct LoggingMiddlewareTests {
    @Test func logsEachActionAndOptionallyTheState() {
        let handler = CapturingLogHandler()
        let logger = Logger(label: "test.store") { _ in handler }
        let store = Store(
            initialState: Tally(),
            reducer: { (state: inout Tally, amount: Int) in state.count += amount },
            middleware: [.logging(logger, level: .info, includeState: true)]
        )
        store.dispatch(2)
        let entries = handler.entries
        #expect(entries == [
            .init(level: .info, message: "action", metadata: ["action": "2"]),
            .init(level: .info, message: "state", metadata: ["action": "2", "state": "Tally(count: 2)"]),
        ])
    }
}
