import Foundation
import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Synchronization
import Testing

/// A recorded session becomes a Swift Testing test in one step: `Generated/ReplaysARecordedTallySession.swift` is
/// what `testSource` writes for the session below, compiled and run as one of this target's tests; it fails, at the
/// step that differs, when the reducer changes.
@Suite("A recording becomes a test")
struct RecordingTestSourceTests {
    static let generatedFile = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Generated/ReplaysARecordedTallySession.swift")

    /// A session with every kind of step: actions that change the state, one that does not, an effect's action
    /// received, and a string that would end a raw string literal with one `#`.
    static func recordSession() async throws -> Recording<Tally, TallyAction> {
        let store = Store(initialState: Tally(), reducer: TallyReducer.make())
        store.startRecording()
        store.dispatch(.rename(##"Groceries "#1" \#(and more)"##))
        store.dispatch(.add(2))
        store.dispatch(.add(3))
        store.dispatch(.refresh)
        store.dispatch(.sum)
        #expect(await eventually { store.state.total == 5 })
        store.dispatch(.add(4))
        return try #require(store.stopRecording())
    }

    /// The committed file is exactly what `testSource` writes; run with `STATEHOUSE_REGENERATE=1` to write it again
    /// after changing the generator.
    @Test func theGeneratedTestIsWhatTestSourceWrites() async throws {
        let recording = try await Self.recordSession()
        #expect(recording.actions.map(\.sentByEffect) == [false, false, false, false, false, true, false])
        let source = try recording.testSource(
            named: "replaysARecordedTallySession", reducer: TallyReducer.make(), writtenAs: "TallyReducer.make()",
            imports: ["StatehouseTestSupport"]
        )
        if ProcessInfo.processInfo.environment["STATEHOUSE_REGENERATE"] == "1" {
            try source.write(to: Self.generatedFile, atomically: true, encoding: .utf8)
        }
        let committed = try String(contentsOf: Self.generatedFile, encoding: .utf8)
        #expect(source == committed, "testSource now writes:\n\(source)")
    }

    /// The generated test, run against a reducer that adds one too many, fails at the first step whose state differs,
    /// naming the action and showing only what differs.
    @Test func theGeneratedTestFailsWhenTheReducerChanges() async throws {
        let messages = Mutex<[String]>([])
        try await withKnownIssue {
            try await TallyReducer.$addsOneTooMany.withValue(true) {
                try await replaysARecordedTallySession()
            }
        } matching: { issue in
            messages.withLock { $0.append(issue.comments.map(\.rawValue).joined(separator: "\n")) }
            return true
        }
        let first = try #require(messages.withLock { $0.first })
        #expect(first == """
            The state after TallyAction.add(2) is not what the test expected (− expected, + actual):
            \u{2007} Tally(
            \u{2007}   entries: [
            −     [0]: 2
            +     [0]: 3
            \u{2007}   ],
            \u{2007}   total: 0,
            \u{2007}   title: ##"Groceries "#1" \\#(and more)"##
            \u{2007} )
            """)
        #expect(messages.withLock { $0.contains("Expected to receive TallyAction.summed(5), but received TallyAction.summed(7).") })
    }

    @Test func aTypeATestFileCannotNameIsRefused() throws {
        struct Local: Codable, Equatable, Sendable { var value = 0 }
        let recording = Recording<Local, TallyAction>(initialState: Local())
        #expect {
            try recording.testSource(reducer: Reducer { _, _ in }, writtenAs: "reducer")
        } throws: { error in
            guard case .unnameableType(let name) = error as? TestSourceError else { return false }
            return name.contains("Local") && (error as? TestSourceError)?.description.contains("inside a function") == true
        }
    }

    /// A value's text (a name a user typed) cannot end the step's comment and write code into the test: every line
    /// break in it, a carriage return too, starts a new comment line.
    @Test func aLineBreakInAnActionStaysInTheComment() throws {
        let injected = "x\rIssue.record(\"injected\")\u{2028}\r\nIssue.record(\"again\")"
        var recording = Recording<Tally, TallyAction>(initialState: Tally())
        recording.actions.append(RecordedAction(date: Date(), action: .rename(injected)))
        let source = try recording.testSource(reducer: TallyReducer.make(), writtenAs: "TallyReducer.make()")
        // The lines as Swift reads them: a carriage return ends one too, a U+2028 does not.
        let lines = source.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r" || $0 == "\r\n" }
        let mentions = lines.filter { $0.contains("Issue.record") && !$0.contains("store.send") && !$0.contains("$0 =") }
        #expect(mentions.count == 2)
        #expect(mentions.allSatisfy { $0.hasPrefix("    //") })
    }

    @Test(arguments: ["", "a b", "1test", "test()", "x-y"])
    func aNameThatIsNotAnIdentifierIsRefused(name: String) {
        #expect(throws: TestSourceError.invalidTestName(name)) {
            try Recording<Tally, TallyAction>(initialState: Tally())
                .testSource(named: name, reducer: TallyReducer.make(), writtenAs: "TallyReducer.make()")
        }
    }

    /// An empty recording is a test of the initial state alone.
    @Test func anEmptyRecordingMakesATestWithoutSteps() throws {
        let source = try Recording<Tally, TallyAction>(initialState: Tally())
            .testSource(reducer: TallyReducer.make(), writtenAs: "TallyReducer.make()")
        #expect(source.contains("let store = TestStore("))
        #expect(!source.contains("store.send") && !source.contains("store.receive"))
        #expect(source.contains("    await store.finish()\n}\n"))
    }
}
