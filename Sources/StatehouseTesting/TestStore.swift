import Foundation
import Statehouse
import Testing

/// A store for tests that checks, action by action, exactly how the state changed and which actions effects sent
/// back.
///
/// ```swift
/// @Test func searching() async {
///     let store = TestStore(initialState: Search(), reducer: searchReducer)
///     await store.send(.search("swift")) { $0.query = "swift" }
///     await store.receive(.results(["Swift"])) { $0.results = ["Swift"] }
///     await store.finish()
/// }
/// ```
///
/// - ``send(_:assert:sourceLocation:)`` applies an action and fails the test unless the state after it equals the
///   state before it changed by the closure (with a line diff of the two).
/// - Actions that effects send back are held, not applied, until ``receive(_:timeout:assert:sourceLocation:)``
///   asserts them, in order.
/// - ``finish(timeout:sourceLocation:)`` fails the test if effects are still running or received actions were not
///   asserted. Call it at the end of every test.
///
/// With ``Exhaustivity/off``, only what a test asserts is checked: the closure's changes must hold in the new state,
/// other changes are ignored, `receive` skips (and applies) actions until the one it expects, and `finish` ignores
/// unasserted actions.
public final class TestStore<State: Equatable & Sendable, Action: Sendable>: Sendable {
    /// How much a test must assert.
    public enum Exhaustivity: Sendable, Equatable {
        /// Every change of the state, every received action, every effect (the default).
        case on
        /// Only what the test asserts.
        case off
    }

    private struct Progress: Sendable {
        var state: State
        /// Actions effects sent back, oldest first.
        var received: [Action] = []
        var exhaustivity: Exhaustivity
    }

    private let reducer: @Sendable (inout State, Action) -> Effect<Action>
    private let progress: Locked<Progress>
    private let effects = EffectRunner<Action>()

    /// - Parameters:
    ///   - initialState: The state before the first action.
    ///   - reducer: The reducer under test, with the effects it returns.
    ///   - exhaustivity: ``Exhaustivity/on`` by default; see the type's documentation.
    public init(
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        exhaustivity: Exhaustivity = .on
    ) {
        self.reducer = reducer
        self.progress = Locked(Progress(state: initialState, exhaustivity: exhaustivity))
    }

    /// A test store for a reducer without effects.
    public convenience init(
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Void,
        exhaustivity: Exhaustivity = .on
    ) {
        self.init(
            initialState: initialState,
            reducer: { state, action in
                reducer(&state, action)
                return .none
            },
            exhaustivity: exhaustivity
        )
    }

    deinit {
        effects.cancelAll()
    }

    /// The state now.
    public var state: State {
        progress.withLock { $0.state }
    }

    /// How much a test must assert; can be changed in the middle of a test.
    public var exhaustivity: Exhaustivity {
        get { progress.withLock { $0.exhaustivity } }
        set { progress.withLock { $0.exhaustivity = newValue } }
    }

    /// Actions effects sent that no ``receive(_:timeout:assert:sourceLocation:)`` has asserted yet.
    public var pendingReceivedActions: [Action] {
        progress.withLock { $0.received }
    }

    /// Applies `action` and checks that the state changed exactly as `assert` says (only in what it says, with
    /// exhaustivity off). Without `assert`, the state must not change.
    public func send(
        _ action: Action,
        assert: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let pending = pendingReceivedActions
        if exhaustivity == .on, !pending.isEmpty {
            Issue.record(
                """
                Sent \(describe(action)) while \(pending.count) received action(s) were not asserted: \
                \(pending.map(describe).joined(separator: ", ")). Assert them with receive(_:) first.
                """,
                sourceLocation: sourceLocation
            )
        }
        apply(action, assert: assert, sourceLocation: sourceLocation)
    }

    /// Waits for the next action an effect sent back, checks that it is `expected`, applies it, and checks the
    /// state like ``send(_:assert:sourceLocation:)``.
    ///
    /// - Parameters:
    ///   - expected: The action an effect must have sent next.
    ///   - timeout: How long to wait for an effect to send it.
    ///   - assert: Changes a copy of the previous state into what the state must now be; `nil`: no change.
    ///   - sourceLocation: Where a failure is reported; the caller's line by default.
    public func receive(
        _ expected: Action,
        timeout: Duration = .seconds(1),
        assert: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async where Action: Equatable {
        await receive(
            description: describe(expected), matching: { $0 == expected },
            timeout: timeout, assert: assert, sourceLocation: sourceLocation
        )
    }

    /// Like ``receive(_:timeout:assert:sourceLocation:)`` for actions that are not `Equatable`: `matches` says
    /// whether the received action is the expected one.
    public func receive(
        _ description: String,
        matching matches: @escaping (Action) -> Bool,
        timeout: Duration = .seconds(1),
        assert: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await receive(
            description: description, matching: matches,
            timeout: timeout, assert: assert, sourceLocation: sourceLocation
        )
    }

    /// Waits for the running effects, then fails the test if some are still running after `timeout`, or (with
    /// exhaustivity on) if received actions were not asserted.
    public func finish(timeout: Duration = .seconds(1), sourceLocation: SourceLocation = #_sourceLocation) async {
        let deadline = ContinuousClock.now + timeout
        while effects.runningCount > 0, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(1))
        }
        if effects.runningCount > 0 {
            Issue.record(
                """
                \(effects.runningCount) effect(s) still running after \(timeout). Make them finish, cancel them \
                with an action, or wait longer with finish(timeout:).
                """,
                sourceLocation: sourceLocation
            )
            effects.cancelAll()
        }
        let pending = pendingReceivedActions
        if exhaustivity == .on, !pending.isEmpty {
            Issue.record(
                """
                \(pending.count) received action(s) were not asserted: \
                \(pending.map(describe).joined(separator: ", ")). Assert them with receive(_:).
                """,
                sourceLocation: sourceLocation
            )
        }
    }

    // MARK: Internals

    private func receive(
        description: String,
        matching matches: @escaping (Action) -> Bool,
        timeout: Duration,
        assert: ((inout State) throws -> Void)?,
        sourceLocation: SourceLocation
    ) async {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let action = progress.withLock({ $0.received.isEmpty ? nil : $0.received.removeFirst() }) {
                if matches(action) {
                    apply(action, assert: assert, sourceLocation: sourceLocation)
                    return
                }
                if exhaustivity == .on {
                    Issue.record(
                        "Expected to receive \(description), but received \(describe(action)).",
                        sourceLocation: sourceLocation
                    )
                    return
                }
                apply(action, assert: nil, checking: false, sourceLocation: sourceLocation)
            } else if ContinuousClock.now >= deadline {
                Issue.record(
                    "Expected to receive \(description), but no effect sent an action within \(timeout).",
                    sourceLocation: sourceLocation
                )
                return
            } else {
                try? await Task.sleep(for: .milliseconds(1))
            }
        }
    }

    private func apply(
        _ action: Action,
        assert: ((inout State) throws -> Void)?,
        checking: Bool = true,
        sourceLocation: SourceLocation
    ) {
        let (before, after, exhaustivity, effect) = progress.withLock { progress in
            let before = progress.state
            let effect = reducer(&progress.state, action)
            return (before, progress.state, progress.exhaustivity, effect)
        }
        effects.start(effect, send: Send { [weak self] action, origin in
            self?.enqueueReceived(action)
            origin?.endWork()
        })
        guard checking, exhaustivity == .on || assert != nil else { return }
        var expected = exhaustivity == .on ? before : after
        do {
            try assert?(&expected)
        } catch {
            Issue.record(error, "The assertion closure for \(describe(action)) threw.", sourceLocation: sourceLocation)
            return
        }
        guard expected != after else { return }
        Issue.record(
            """
            The state after \(describe(action)) is not what the test expected \
            (− expected, + actual):
            \(lineDiff(expected: describe(expected), actual: describe(after)))
            """,
            sourceLocation: sourceLocation
        )
    }

    private func enqueueReceived(_ action: Action) {
        progress.withLock { $0.received.append(action) }
    }
}

/// A multi-line description of `value` for diffs.
func describe<Value>(_ value: Value) -> String {
    var text = ""
    dump(value, to: &text)
    return text.hasSuffix("\n") ? String(text.dropLast()) : text
}
