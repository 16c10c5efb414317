import Statehouse
import StatehouseTestSupport
import StatehouseTesting
import Testing

/// The test store's path is `@inlinable`: every kind of failure is still reported, once, at the line of the call that
/// met it.
@Suite("TestStore failures are reported once, where the call is")
struct TestStoreFailureLocationTests {
    typealias Tap = TestStoreParityTests.Tap

    struct Thrown: Error {}

    /// Runs `body`, which must record exactly one issue, at `line` of this file.
    private func expectOneIssue(atLine line: Int, _ body: () async -> Void) async {
        let reported = Recorder<String>()
        await withKnownIssue {
            await body()
        } matching: { issue in
            reported.append("\(issue.sourceLocation?.fileID ?? "?"):\(issue.sourceLocation?.line ?? -1)")
            return true
        }
        #expect(reported.elements == ["\(#fileID):\(line)"])
    }

    @Test func eachFailureIsReportedOnceAtTheLineOfTheCall() async {
        let store = TestStore(initialState: 0, reducer: TestStoreParityTests.tapReducer)
        // A state that is not what the closure says.
        await expectOneIssue(atLine: #line + 1) {
            await store.send(.tap) { $0 = 5 }
        }
        #expect(await eventually { store.pendingReceivedActions == [.response(42)] })
        // A send while a received action was not asserted (the state itself is as asserted: 42 → 43); the action
        // stays for a receive.
        await expectOneIssue(atLine: #line + 1) {
            await store.send(.tap) { $0 = 43 }
        }
        #expect(await eventually { store.pendingReceivedActions == [.response(42), .response(42)] })
        // A receive of another action than the one received.
        await expectOneIssue(atLine: #line + 1) {
            await store.receive(.tap) { $0 = 42 }
        }
        await store.receive(.response(42)) { $0 = 42 }
        // A receive of an action no effect sends: nothing is left running or queued to send one.
        await store.waitForQueuedWork()
        #expect(await eventually { store.pendingReceivedActions.isEmpty })
        await expectOneIssue(atLine: #line + 1) {
            await store.receive(.response(42), timeout: .milliseconds(50)) { $0 = 42 }
        }
        // An assertion closure that throws.
        await expectOneIssue(atLine: #line + 1) {
            await store.send(.tap) { _ in throw Thrown() }
        }
        #expect(await eventually { store.pendingReceivedActions == [.response(42)] })
        // finish with a received action not asserted; the store then goes away without a second report.
        await expectOneIssue(atLine: #line + 1) {
            await store.finish()
        }
    }
}
