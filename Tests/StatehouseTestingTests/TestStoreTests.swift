import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Testing

struct Search: Equatable, Sendable {
    var query = ""
    var results: [String] = []
}

enum SearchAction: Equatable, Sendable {
    case search(String)
    case results([String])
    case slow
    case chatty
}

let searchReducer: @Sendable (inout Search, SearchAction) -> Effect<SearchAction> = { state, action in
    switch action {
    case .search(let query):
        state.query = query
        return .run { send in send(.results([query.uppercased()])) }
    case .results(let results):
        state.results = results
        return .none
    case .slow:
        return .run { _ in try? await Task.sleep(for: .seconds(3_600)) }
    case .chatty:
        return .merge(.send(.results(["a"])), .send(.results(["b"])))
    }
}

@Suite("TestStore")
struct TestStoreTests {
    @Test func exhaustiveSendAndReceivePass() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer)
        await store.send(.search("swift")) { $0.query = "swift" }
        await store.receive(.results(["SWIFT"])) { $0.results = ["SWIFT"] }
        await store.finish()
        #expect(store.state == Search(query: "swift", results: ["SWIFT"]))
    }

    /// A `send` while a received action is not asserted fails, and leaves that action for the `receive` that
    /// asserts it next.
    @Test func sendingBeforeReceivingFailsButConsumesNothing() async {
        typealias Tap = TestStoreParityTests.Tap
        let store = TestStore(initialState: 0, reducer: TestStoreParityTests.tapReducer)
        await store.send(.tap) { $0 = 1 }
        #expect(await eventually { store.pendingReceivedActions == [.response(42)] })
        await withKnownIssue {
            await store.send(.tap) { $0 = 43 }
        } matching: { issue in
            issue.description.contains("were not asserted")
        }
        #expect(await eventually { store.pendingReceivedActions == [.response(42), .response(42)] })
        await store.receive(.response(42)) { $0 = 42 }
        await store.receive(.response(42)) { $0 = 42 }
        await store.finish()
    }

    @Test func wrongMutationFailsWithADiff() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer)
        await withKnownIssue {
            await store.send(.search("swift")) { $0.query = "swift!" }
        } matching: { issue in
            let text = issue.comments.map(\.rawValue).joined()
            return text.contains("not what the test expected") && text.contains("− ") && text.contains("+ ")
                && text.contains("swift!")
        }
        await store.receive(.results(["SWIFT"])) { $0.results = ["SWIFT"] }
        await store.finish()
    }

    @Test func unassertedChangeFailsInExhaustiveMode() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer)
        await withKnownIssue {
            await store.send(.results(["x"]))
        }
        await store.finish()
    }

    @Test func finishingWithUnreceivedActionsFails() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer)
        await store.send(.search("a")) { $0.query = "a" }
        await withKnownIssue {
            await store.finish()
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("received action(s) were not asserted")
        }
    }

    @Test func finishingWithRunningEffectsFails() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer)
        await store.send(.slow)
        await withKnownIssue {
            await store.finish(timeout: .milliseconds(20))
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("still running")
        }
    }

    @Test func receivingTheWrongActionFails() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer)
        await store.send(.search("a")) { $0.query = "a" }
        await withKnownIssue {
            await store.receive(.results(["B"]))
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains("Expected to receive")
        }
        await store.finish()
    }

    @Test func receivingWhenNothingComesFailsAfterTheTimeout() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer)
        await withKnownIssue {
            await store.receive(.results([]), timeout: .milliseconds(20))
        }
        await store.finish()
    }

    @Test func nonExhaustiveModeChecksOnlyWhatIsAsserted() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer, exhaustivity: .off)
        await store.send(.search("swift"))
        await store.send(.chatty)
        await store.receive(.results(["b"])) { $0.results = ["b"] }
        #expect(store.state.results == ["b"])
        await store.finish()
    }

    @Test func nonExhaustiveModeStillChecksTheAssertedFields() async {
        let store = TestStore(initialState: Search(), reducer: searchReducer, exhaustivity: .off)
        await withKnownIssue {
            await store.send(.search("swift")) { $0.query = "kotlin" }
        }
        await store.finish()
    }
}
