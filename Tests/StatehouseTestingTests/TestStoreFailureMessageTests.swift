import Statehouse
import Synchronization
import StatehouseTesting
import Testing

/// What a failing test store says, word for word: actions and states written as code (swift-custom-dump), and a
/// state's diff showing only what differs, − expected and + actual (unchanged lines begin with a figure space, as
/// custom-dump's proportional format writes them, so that the columns line up in any font).
@Suite("TestStore's failure messages")
struct TestStoreFailureMessageTests {
    struct Profile: Equatable, Sendable {
        var name = "Ada"
        var age: Int?
        var tags: Set<String> = ["a", "b"]
    }

    enum Edit: Equatable, Sendable {
        case rename(String)
        case move(x: Int, y: Int)
        case tag(String)
    }

    static func edit(_ profile: inout Profile, _ action: Edit) {
        switch action {
        case .rename(let name): profile.name = name
        case .move: break
        case .tag(let tag): profile.tags.insert(tag)
        }
    }

    /// The message of the one issue `body` records.
    static func message(of body: () async -> Void) async -> String {
        let messages = Mutex<[String]>([])
        await withKnownIssue {
            await body()
        } matching: { issue in
            messages.withLock { $0.append(issue.comments.map(\.rawValue).joined(separator: "\n")) }
            return true
        }
        let recorded = messages.withLock { $0 }
        #expect(recorded.count == 1, "\(recorded)")
        return recorded.first ?? ""
    }

    @Test func aWrongStateShowsTheActionAndOnlyWhatDiffers() async {
        let store = TestStore(initialState: Profile(), reducer: Self.edit)
        let message = await Self.message {
            await store.send(.tag("c")) {
                $0.tags.insert("d")
                $0.age = 3
            }
        }
        #expect(message == """
            The state after TestStoreFailureMessageTests.Edit.tag("c") is not what the test expected (− expected, + actual):
            \u{2007} TestStoreFailureMessageTests.Profile(
            \u{2007}   name: "Ada",
            −   age: 3,
            +   age: nil,
            \u{2007}   tags: Set([
            −     "d"
            +     "c"
            \u{2007}     … (2 unchanged)
            \u{2007}   ])
            \u{2007} )
            """)
        await store.finish()
    }

    @Test func aStateThatDidNotChangeAsAssertedSaysSo() async {
        let store = TestStore(initialState: Profile(), reducer: Self.edit)
        let message = await Self.message {
            await store.send(.move(x: 1, y: 2)) { $0.name = "Ada" }
        }
        #expect(message == """
            Expected the state to change after TestStoreFailureMessageTests.Edit.move(
              x: 1,
              y: 2
            ), but no change occurred. If no change is expected, leave out the assertion closure.
            """)
        await store.finish()
    }

    @Test func aReceivedActionThatIsNotTheExpectedOneIsNamed() async {
        let store = TestStore(initialState: 0) { (state: inout Int, action: Int) -> Effect<Int> in
            state = action
            return action == 1 ? .send(2) : .none
        }
        await store.send(1) { $0 = 1 }
        let message = await Self.message {
            await store.receive(3) { $0 = 3 }
        }
        #expect(message == "Expected to receive 3, but received 2.")
        await store.finish()
    }

    @Test func voidAndCasesOfEnumsWithADescriptionAreWrittenAsCode() async {
        let counter = TestStore(initialState: 0) { (state: inout Int, _: Void) in state += 1 }
        let message = await Self.message { await counter.send(()) { $0 = 5 } }
        #expect(message == """
            The state after () is not what the test expected (− expected, + actual):
            − 5
            + 1
            """)
        await counter.finish()
        let spoken = TestStore(initialState: 0) { (state: inout Int, _: Spoken) in state += 1 }
        let spokenMessage = await Self.message { await spoken.send(.go) { $0 = 2 } }
        #expect(spokenMessage == """
            The state after TestStoreFailureMessageTests.Spoken.go is not what the test expected (− expected, + actual):
            − 2
            + 1
            """)
        await spoken.finish()
    }

    enum Spoken: Equatable, Sendable, CustomStringConvertible {
        case go

        var description: String { "the go button" }
    }
}
