import Foundation
import Statehouse
import StatehouseTesting
import Testing

/// A feature whose reducer reaches time and identity through its environment, tested with a manual clock and
/// predictable UUIDs.
@Suite("TestStore with a test environment")
struct TestStoreDependencyTests {
    struct Search: Equatable, Sendable {
        var query = ""
        var searches: [UUID] = []
    }

    enum SearchAction: Equatable, Sendable {
        case typed(String)
        case search
    }

    struct Environment: Sendable {
        var clock: any Clock<Duration>
        var uuid: @Sendable () -> UUID
    }

    static func reducer(_ state: inout Search, _ action: SearchAction, _ environment: Environment) -> Effect<SearchAction> {
        switch action {
        case .typed(let query):
            state.query = query
            return Effect.send(.search).debounce(id: "search", for: .milliseconds(300), clock: environment.clock)
        case .search:
            state.searches.append(environment.uuid())
            return .none
        }
    }

    @Test func typingQuicklySearchesOnceAfterThePause() async {
        let clock = ManualClock()
        let uuids = IncrementingUUIDs()
        let store = TestStore(
            initialState: Search(),
            environment: Environment(clock: clock, uuid: uuids.next),
            reducer: Self.reducer
        )
        await store.send(.typed("s")) { $0.query = "s" }
        await clock.waitForSleepers(1)
        await store.send(.typed("sw")) { $0.query = "sw" }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(299))
        await store.send(.typed("swi")) { $0.query = "swi" }
        await clock.waitForSleepers(1)
        clock.advance(by: .milliseconds(300))
        await store.receive(.search) { $0.searches = [UUID(0)] }
        await store.finish()
    }
}
