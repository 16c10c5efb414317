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
/// A test store runs a real `Store`: actions are applied, and effects' actions arrive, exactly as in the app (in
/// the store's order, a cancelled effect's actions dropped). It records the state before and after each action, and
/// the test asserts those steps afterwards, in order:
///
/// - ``send(_:assert:sourceLocation:)`` sends an action and fails the test unless the state after it equals the
///   state before it changed by the closure (with a diff of the two, only where they differ). A closure that changes nothing, where the
///   state did not change, fails too: leave the closure out.
/// - ``receive(_:timeout:assert:sourceLocation:)`` asserts the next action an effect sent back, waiting for it if
///   needed, and the state it left.
/// - ``finish(timeout:sourceLocation:)`` waits for the effects, then fails the test if some are still running or
///   received actions were not asserted. Call it at the end of every test; a test store that goes away without it,
///   with effects running or actions unasserted, fails the test where it was created.
/// - ``state`` is the state as of the last assertion: inside an assertion closure, still the state before the action.
///
/// Tasks of one test may send at the same time: each `send` asserts the step of its own action, and what another
/// task sent is never taken for a skipped action.
///
/// With ``Exhaustivity/off``, only what a test asserts is checked: the closure's changes must hold in the new state,
/// other changes are ignored, `send` and `receive` skip the received actions before the one they assert, and
/// `finish` ignores unasserted actions and cancels running effects.
public final class TestStore<State: Equatable & Sendable, Action: Sendable>: Sendable {
    /// How much a test must assert.
    public enum Exhaustivity: Sendable, Equatable {
        /// Every change of the state, every received action, every effect (the default).
        case on
        /// Only what the test asserts.
        case off
    }

    @usableFromInline
    struct Settings: Sendable {
        @usableFromInline var exhaustivity: Exhaustivity
        @usableFromInline var nextNumber: UInt64 = 0
        @usableFromInline var finished = false

        @inlinable
        init(exhaustivity: Exhaustivity) {
            self.exhaustivity = exhaustivity
        }
    }

    // The test store's own path (`send`, the reducer made in `init`, the checks) is inlinable, down to the inner
    // store's: specialized for the test's state and action, as the store is in an app. Unspecialized, the generic
    // code looked up type metadata at each step, and a `send` cost ×30 a `dispatch` (Benchmarks/README.md).
    @usableFromInline let store: Store<State, TestStoreAction<Action>>
    @usableFromInline let log: StepLog<State, Action>
    @usableFromInline let settings: Locked<Settings>
    /// Where the test created the store: a store that goes away with work unasserted fails the test there.
    @usableFromInline let creation: SourceLocation

    /// Creates a test store for `reducer`.
    ///
    /// - Parameters:
    ///   - initialState: The state before the first action.
    ///   - reducer: The reducer under test, with the effects it returns.
    ///   - exhaustivity: ``Exhaustivity/on`` by default; see the type's documentation.
    ///   - sourceLocation: Where to report work left unasserted when the store goes away without
    ///     ``finish(timeout:sourceLocation:)``.
    @inlinable
    public init(
        initialState: State,
        reducer: Reducer<State, Action>,
        exhaustivity: Exhaustivity = .on,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let log = StepLog<State, Action>(initialState: initialState)
        self.log = log
        self.settings = Locked(Settings(exhaustivity: exhaustivity))
        self.creation = sourceLocation
        self.store = Store(initialState: initialState) { (state: inout State, sent: TestStoreAction<Action>) in
            let before = state
            let effect = reducer.reduce(&state, sent.action)
            log.append(TestStep(action: sent, before: before, after: state))
            return effect.isNone ? .none : effect.map(TestStoreAction.received)
        }
    }

    /// Creates a test store for a reducer closure that may return an `Effect`.
    @_disfavoredOverload
    public convenience init(
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        exhaustivity: Exhaustivity = .on,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.init(
            initialState: initialState, reducer: Reducer(reducer), exhaustivity: exhaustivity,
            sourceLocation: sourceLocation
        )
    }

    /// Creates a test store for a reducer without effects.
    public convenience init(
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Void,
        exhaustivity: Exhaustivity = .on,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.init(
            initialState: initialState, reducer: Reducer(reducer), exhaustivity: exhaustivity,
            sourceLocation: sourceLocation
        )
    }

    /// Creates a test store whose reducer reaches its dependencies through `environment`: pass the test's
    /// (a ``ManualClock``, fixed UUIDs and dates, fake services) where the app passes the live ones.
    ///
    /// ```swift
    /// let store = TestStore(initialState: Timer(), environment: TimerEnvironment(clock: clock), reducer: timer)
    /// ```
    public convenience init<Environment: Sendable>(
        initialState: State,
        environment: Environment,
        reducer: @escaping @Sendable (inout State, Action, Environment) -> Effect<Action>,
        exhaustivity: Exhaustivity = .on,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        self.init(
            initialState: initialState, reducer: Reducer(environment: environment, reducer),
            exhaustivity: exhaustivity, sourceLocation: sourceLocation
        )
    }

    deinit {
        let (finished, exhaustivity) = settings.withLock { ($0.finished, $0.exhaustivity) }
        guard !finished, exhaustivity == .on else { return }
        let unasserted = log.withProgress { TestStep.receivedActions(in: $0.pending) }
        let running = store.runningEffects
        guard !unasserted.isEmpty || running > 0 else { return }
        Issue.record(
            """
            The test store went away \(Self.describeLeftovers(actions: unasserted, effects: running)). \
            Assert them and call finish() at the end of the test.
            """,
            sourceLocation: creation
        )
    }

    /// The state as of the last assertion (or the initial state): inside an assertion closure, the state before
    /// the action asserted.
    public var state: State {
        log.withProgress { $0.asserted }
    }

    /// How much a test must assert; can be changed in the middle of a test.
    @inlinable
    public var exhaustivity: Exhaustivity {
        get { settings.withLock { $0.exhaustivity } }
        set { settings.withLock { $0.exhaustivity = newValue } }
    }

    /// Actions effects sent, already applied, that no ``receive(_:timeout:assert:sourceLocation:)`` has asserted.
    public var pendingReceivedActions: [Action] {
        log.withProgress { TestStep.receivedActions(in: $0.pending) }
    }

    /// Sends `action` and checks that the state changed exactly as `assert` says (only in what it says, with
    /// exhaustivity off). Without `assert`, the state must not change.
    ///
    /// With exhaustivity on, actions received before and not asserted fail the test, and stay for the `receive`s
    /// that assert them; with it off they are skipped.
    @inlinable
    public func send(
        _ action: Action,
        assert: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let number = settings.withLock { settings in
            // Work after an early finish() is checked again when the store goes away.
            settings.finished = false
            defer { settings.nextNumber += 1 }
            return settings.nextNumber
        }
        store.dispatch(.sent(action, number: number))
        let deadline = ContinuousClock.now + Self.applyTimeout
        let exhaustive = exhaustivity == .on
        guard let taken = await log.wait(until: deadline, for: { progress in
            exhaustive ? progress.takeSentLeavingReceived(number: number) : progress.takeSent(number: number)
        }) else {
            return fail(
                "The store did not apply \(described(action)) within \(Self.applyTimeout): is a reducer stuck?",
                sourceLocation: sourceLocation
            )
        }
        let unasserted = TestStep.receivedActions(in: taken.skipped)
        if exhaustive, !unasserted.isEmpty {
            Issue.record(
                """
                Sent \(described(action)) while \(unasserted.count) received action(s) were not \
                asserted: \(Self.list(unasserted)). Assert them with receive(_:) first.
                """,
                sourceLocation: sourceLocation
            )
        }
        check(taken.step, assert: assert, sourceLocation: sourceLocation)
    }

    /// Checks that the next action an effect sent back is `expected` (waiting for it until `timeout`), and the state
    /// after it like ``send(_:assert:sourceLocation:)``.
    ///
    /// With exhaustivity off, received actions before the first that matches are skipped; if none matches, nothing
    /// is skipped.
    ///
    /// - Parameters:
    ///   - expected: The action an effect must have sent next.
    ///   - timeout: How long to wait for an effect to send it; generous by default, since a busy machine (a test
    ///     suite in parallel, ThreadSanitizer) can keep an effect's task from running for seconds. Waiting ends as
    ///     soon as the action arrives.
    ///   - assert: Changes a copy of the previous state into what the state must now be; `nil`: no change.
    ///   - sourceLocation: Where a failure is reported; the caller's line by default.
    public func receive(
        _ expected: Action,
        timeout: Duration = .seconds(10),
        assert: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async where Action: Equatable {
        await receive(
            description: described(expected), matching: { $0 == expected },
            timeout: timeout, assert: assert, sourceLocation: sourceLocation
        )
    }

    /// Like ``receive(_:timeout:assert:sourceLocation:)`` for actions that are not `Equatable`: `matches` says
    /// whether the received action is the expected one.
    public func receive(
        _ description: String,
        matching matches: @escaping (Action) -> Bool,
        timeout: Duration = .seconds(10),
        assert: ((inout State) throws -> Void)? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await receive(
            description: description, matching: matches,
            timeout: timeout, assert: assert, sourceLocation: sourceLocation
        )
    }

    /// Waits for the running effects, then fails the test if some are still running after `timeout`, or if
    /// received actions were not asserted. With exhaustivity off, running effects are cancelled and unasserted
    /// actions skipped without failing.
    public func finish(timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation) async {
        defer { settings.withLock { $0.finished = true } }
        let exhaustive = exhaustivity == .on
        // On a busy machine the wait can outlast the deadline with nothing left running: only running effects fail.
        if await !effectsFinish(before: ContinuousClock.now + timeout), store.runningEffects > 0 {
            if exhaustive {
                Issue.record(
                    """
                    \(store.runningEffects) effect(s) still running after \(timeout). Make them finish, cancel them \
                    with an action, wait longer with finish(timeout:), or call skipInFlightEffects().
                    """,
                    sourceLocation: sourceLocation
                )
            }
            store.cancelAllEffects()
        }
        await store.waitForQueuedWork()
        let unasserted = pendingReceivedActions
        if exhaustive, !unasserted.isEmpty {
            Issue.record(
                """
                \(unasserted.count) received action(s) were not asserted: \(Self.list(unasserted)). Assert them \
                with receive(_:), or call skipReceivedActions().
                """,
                sourceLocation: sourceLocation
            )
        }
        log.withProgress { _ = $0.takeAll() }
    }

    /// Accepts, without asserting them, the actions effects sent so far; ``state`` becomes the state after them.
    public func skipReceivedActions() async {
        await store.waitForQueuedWork()
        log.withProgress { _ = $0.takeAll() }
    }

    /// Cancels the effects still running, so that the test can end without waiting for them; the actions they
    /// queued and the store had not applied yet are dropped.
    public func skipInFlightEffects() async {
        store.cancelAllEffects()
        await store.waitForQueuedWork()
    }

    /// Returns once the inner store has applied everything queued before the call: for tests of the test store
    /// that must know an effect's actions were all applied.
    package func waitForQueuedWork() async {
        await store.waitForQueuedWork()
    }

    // MARK: Internals

    /// How long `send` waits for the store to apply its action (it is busy only while applying other actions).
    @usableFromInline
    static var applyTimeout: Duration { .seconds(30) }

    /// `description` is built only on failure: by reflection, it costs more than the whole step.
    private func receive(
        description: @autoclosure () -> String,
        matching matches: @escaping (Action) -> Bool,
        timeout: Duration,
        assert: ((inout State) throws -> Void)?,
        sourceLocation: SourceLocation
    ) async {
        let deadline = ContinuousClock.now + timeout
        guard exhaustivity == .on else {
            guard let taken = await log.wait(until: deadline, for: { $0.takeReceived(matching: matches) }) else {
                return fail(
                    """
                    Expected to receive \(description()), but no effect sent a matching action within \(timeout) \
                    (received and not asserted: \(Self.list(pendingReceivedActions))).
                    """,
                    sourceLocation: sourceLocation
                )
            }
            return check(taken.step, assert: assert, sourceLocation: sourceLocation)
        }
        guard let step = await log.wait(until: deadline, for: { $0.takeFirst() }) else {
            return fail(
                "Expected to receive \(description()), but no effect sent an action within \(timeout).",
                sourceLocation: sourceLocation
            )
        }
        guard step.isReceived, matches(step.action.action) else {
            log.withProgress { $0.asserted(step) }
            return fail(
                "Expected to receive \(description()), but received \(described(step.action.action)).",
                sourceLocation: sourceLocation
            )
        }
        check(step, assert: assert, sourceLocation: sourceLocation)
    }

    /// Checks the state `step` left against `assert` applied to the state before it (exhaustive) or after it.
    @inlinable
    func check(
        _ step: TestStep<State, Action>,
        assert: ((inout State) throws -> Void)?,
        sourceLocation: SourceLocation
    ) {
        defer { log.withProgress { $0.asserted(step) } }
        let exhaustive = exhaustivity == .on
        guard exhaustive || assert != nil else { return }
        var expected = exhaustive ? step.before : step.after
        do {
            try assert?(&expected)
        } catch {
            let action = described(step.action.action)
            Issue.record(error, "The assertion closure for \(action) threw.", sourceLocation: sourceLocation)
            return
        }
        if let failure = StateMismatch(step: step, expected: expected, exhaustive: exhaustive, asserted: assert != nil) {
            Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
        }
    }

    /// Waits for every running effect, until `deadline`; returns whether they all finished.
    private func effectsFinish(before deadline: ContinuousClock.Instant) async -> Bool {
        let store = self.store
        return await firstOf({ await store.finishEffects() }, orDeadline: deadline)
    }

    @usableFromInline
    func fail(_ message: Comment, sourceLocation: SourceLocation) {
        Issue.record(message, sourceLocation: sourceLocation)
    }

    @usableFromInline
    static func list(_ actions: [Action]) -> String {
        actions.map(described).joined(separator: ", ")
    }

    private static func describeLeftovers(actions: [Action], effects: Int) -> String {
        var parts: [String] = []
        if !actions.isEmpty { parts.append("with \(actions.count) received action(s) not asserted: \(list(actions))") }
        if effects > 0 { parts.append("with \(effects) effect(s) still running") }
        return parts.joined(separator: " and ")
    }
}
