import Logging
import Statehouse
import StatehouseLogging
import StatehouseTestSupport
import Testing

struct Account: Equatable, Sendable {
    var owner = ""
    var password = ""
}

enum AccountAction: Sendable {
    case rename(String)
    case setPassword(old: String, new: String)
    case lock
}

func reduceAccount(_ state: inout Account, _ action: AccountAction) {
    switch action {
    case .rename(let owner): state.owner = owner
    case .setPassword(_, let new): state.password = new
    case .lock: state.password = ""
    }
}

@Suite("Logging middleware")
struct LoggingMiddlewareTests {
    /// A store of an `Account` whose actions go through `.logging`, made by `middleware` from a capturing logger.
    func store(
        _ middleware: (Logger) -> Middleware<Account, AccountAction>
    ) -> (store: Store<Account, AccountAction>, log: CapturingLogHandler) {
        let handler = CapturingLogHandler()
        let logger = Logger(label: "test.store") { _ in handler }
        return (Store(initialState: Account(), reducer: reduceAccount, middleware: [middleware(logger)]), handler)
    }

    @Test func actionsAreLoggedByTheirCaseWithNoPayloadByDefault() {
        let (store, log) = store { .logging($0) }
        store.dispatch(.rename("Ann-secret"))
        store.dispatch(.setPassword(old: "old-secret", new: "new-secret"))
        store.dispatch(.lock)
        #expect(log.entries == [
            .init(level: .debug, message: "action", metadata: ["action": "rename"]),
            .init(level: .debug, message: "action", metadata: ["action": "setPassword"]),
            .init(level: .debug, message: "action", metadata: ["action": "lock"]),
        ])
        #expect(!log.entries.contains { "\($0)".contains("secret") })
    }

    @Test func describedActionsAndStateShowTheirValues() {
        let (store, log) = store { .logging($0, level: .info, actions: .described, state: .described) }
        store.dispatch(.rename("Ann"))
        #expect(log.entries == [
            .init(level: .info, message: "action", metadata: ["action": "rename", "value": #"rename("Ann")"#]),
            .init(
                level: .info, message: "state",
                metadata: ["action": "rename", "value": #"Account(owner: "Ann", password: "")"#]
            ),
        ])
    }

    @Test func aLoggableRuleShowsOnlyWhatItReturns() {
        let (store, log) = store { logger in
            .logging(
                logger,
                actions: .loggable { action in
                    if case .rename(let owner) = action { owner } else { nil }
                },
                state: .loggable { $0.password.isEmpty ? "no password" : "password set" }
            )
        }
        store.dispatch(.rename("Ann"))
        store.dispatch(.setPassword(old: "", new: "hunter2-secret"))
        #expect(log.entries.map(\.metadata) == [
            ["action": "rename", "value": "Ann"], ["action": "rename", "value": "no password"],
            ["action": "setPassword"], ["action": "setPassword", "value": "password set"],
        ])
        #expect(log.entries.map(\.message) == ["action", "state", "action", "state"])
        #expect(!log.entries.contains { "\($0)".contains("secret") })
    }

    @Test func aRedactedStateRuleLogsTheStateEventWithoutItsValue() {
        let (store, log) = store { .logging($0, state: .redacted) }
        store.dispatch(.setPassword(old: "", new: "hunter2-secret"))
        #expect(log.entries.map(\.message) == ["action", "state"])
        #expect(log.entries.allSatisfy { $0.metadata == ["action": "setPassword"] })
    }

    @Test func anActionThatIsNotAnEnumIsNamedByItsType() {
        let handler = CapturingLogHandler()
        let logger = Logger(label: "test.store") { _ in handler }
        let store = Store(
            initialState: 0, reducer: { (state: inout Int, amount: Int) in state += amount },
            middleware: [.logging(logger)]
        )
        store.dispatch(42)
        #expect(handler.entries == [.init(level: .debug, message: "action", metadata: ["action": "Int"])])
    }

    @Test func manyThreadsDispatchingLogEveryActionOnceWithoutValues() async {
        let (store, log) = store { .logging($0) }
        let threads = 8
        let perThread = 200
        await onNewThreads(threads) { thread in
            for index in 0..<perThread { store.dispatch(.rename("secret-\(thread)-\(index)")) }
        }
        // A dispatch made while another thread's runs is queued and run by that thread: poll until all have run.
        #expect(await eventually { log.entries.count == threads * perThread })
        #expect(log.entries.count == threads * perThread)
        #expect(log.entries.allSatisfy { $0.metadata == ["action": "rename"] })
    }
}
