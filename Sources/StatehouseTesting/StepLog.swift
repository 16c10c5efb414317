import Statehouse

/// What the inner store applied and the test has not asserted yet, and the test's view of the state.
@usableFromInline
struct StepProgress<State: Sendable, Action: Sendable>: Sendable {
    /// Applied steps not asserted yet, oldest first.
    @usableFromInline var pending: [TestStep<State, Action>] = []
    /// The state after the last step the test asserted or skipped: ``TestStore/state``. Taking a step moves it to
    /// the state before that step (past those skipped); ``asserted(_:)`` moves it past the step, after the
    /// assertion closure saw the state before.
    @usableFromInline var asserted: State

    @inlinable
    init(asserted: State) {
        self.asserted = asserted
    }

    /// Takes the step of the action the test sent as `number`, with the steps applied before it.
    @inlinable
    mutating func takeSent(number: UInt64) -> TakenStep<State, Action>? {
        guard let index = pending.firstIndex(where: { $0.isSent(number: number) }) else { return nil }
        return take(through: index)
    }

    /// Takes the step of the action the test sent as `number`, leaving the received steps before it pending: an
    /// exhaustive `send` fails for them, but they stay for the `receive`s that assert them next. The taken step's
    /// `skipped` lists them, without taking them.
    @inlinable
    mutating func takeSentLeavingReceived(number: UInt64) -> TakenStep<State, Action>? {
        guard let index = pending.firstIndex(where: { $0.isSent(number: number) }) else { return nil }
        let step = pending.remove(at: index)
        var unasserted: [TestStep<State, Action>] = []
        for earlier in pending[..<index] where earlier.isReceived { unasserted.append(earlier) }
        asserted = step.before
        return TakenStep(skipped: unasserted, step: step)
    }

    /// Takes the first pending received step, which an exhaustive `receive` must match. A sent step before it is
    /// left for its `send` (see ``take(through:)``).
    mutating func takeFirst() -> TestStep<State, Action>? {
        guard let index = pending.firstIndex(where: { $0.isReceived }) else { return nil }
        return take(through: index).step
    }

    /// Takes the first received step that `matches` accepts, with the steps applied before it.
    mutating func takeReceived(
        matching matches: (Action) -> Bool
    ) -> TakenStep<State, Action>? {
        guard let index = pending.firstIndex(where: { $0.isReceived && matches($0.action.action) }) else { return nil }
        return take(through: index)
    }

    /// Takes every pending received step; the state is then the state after every step applied. Sent steps are
    /// left for their `send` (see ``take(through:)``).
    mutating func takeAll() -> [TestStep<State, Action>] {
        guard let last = pending.last else { return [] }
        asserted = last.after
        var taken: [TestStep<State, Action>] = []
        var sent: [TestStep<State, Action>] = []
        for step in pending {
            if step.isReceived { taken.append(step) } else { sent.append(step) }
        }
        pending = sent
        return taken
    }

    /// Moves the test's view of the state past `step`, once its assertion ran (it sees the state before).
    @inlinable
    mutating func asserted(_ step: TestStep<State, Action>) {
        asserted = step.after
    }

    /// Takes the step at `index`, with the received steps before it, skipped.
    ///
    /// A sent step before it stays pending: it is the step of a `send` of another task, which has not taken it yet
    /// (a `send` takes its own before it returns). Taken here as skipped, it was gone when that `send` looked for it,
    /// and that `send` failed after waiting 30 s for its action to be applied.
    @inlinable
    mutating func take(through index: Int) -> TakenStep<State, Action> {
        let step = pending[index]
        // Nothing skipped is the common case: no slice, no new array.
        var skipped: [TestStep<State, Action>] = []
        if index == 0 {
            pending.removeFirst()
        } else {
            var othersSent: [TestStep<State, Action>] = []
            for earlier in pending[..<index] {
                if earlier.isReceived { skipped.append(earlier) } else { othersSent.append(earlier) }
            }
            pending.replaceSubrange(...index, with: othersSent)
        }
        // The assertion closure sees the state just before the action: after the skipped steps, if any.
        asserted = step.before
        return TakenStep(skipped: skipped, step: step)
    }
}

/// A step taken for the test, with the steps applied before it that the test did not assert.
///
/// A struct, not a tuple: the test store's code is generic, and a generic tuple type is rebuilt from its mangled name
/// each time it is used (the runtime caches nominal types, not these), which made each `send` cost microseconds.
@usableFromInline
struct TakenStep<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline let skipped: [TestStep<State, Action>]
    @usableFromInline let step: TestStep<State, Action>

    @inlinable
    init(skipped: [TestStep<State, Action>], step: TestStep<State, Action>) {
        self.skipped = skipped
        self.step = step
    }
}

/// The steps the inner store applies, and the wake-up of a test waiting for one: `receive` waits on a signal, not
/// on a polling loop.
@usableFromInline
final class StepLog<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline
    struct Contents: Sendable {
        @usableFromInline var progress: StepProgress<State, Action>
        /// Counts the steps appended, so that a waiter sleeps only if nothing came since it last looked.
        @usableFromInline var generation: UInt64 = 0
        @usableFromInline var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        @usableFromInline var nextWaiter: UInt64 = 0

        init(progress: StepProgress<State, Action>) {
            self.progress = progress
        }
    }

    @usableFromInline let contents: Locked<Contents>

    @usableFromInline
    init(initialState: State) {
        contents = Locked(Contents(progress: StepProgress(asserted: initialState)))
    }

    /// Records a step; called by the inner store's reducer, with the store's state lock held.
    @inlinable
    func append(_ step: TestStep<State, Action>) {
        let waiters: [CheckedContinuation<Void, Never>] = contents.withLock { contents in
            contents.progress.pending.append(step)
            contents.generation &+= 1
            // Usually nobody waits: `send` finds its step applied already.
            guard !contents.waiters.isEmpty else { return [] }
            defer { contents.waiters = [:] }
            return Array(contents.waiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Runs `body` on the progress, under the log's lock.
    @inlinable
    func withProgress<Result: Sendable>(_ body: (inout StepProgress<State, Action>) -> Result) -> Result {
        contents.withLock { body(&$0.progress) }
    }

    /// Runs `attempt` on the progress each time a step arrives, until it returns a result or `deadline` passes.
    @inlinable
    func wait<Result: Sendable>(
        until deadline: ContinuousClock.Instant,
        for attempt: (inout StepProgress<State, Action>) -> Result?
    ) async -> Result? {
        while true {
            // No tuple: in this generic code it would be rebuilt from its mangled name on every call.
            var generation: UInt64 = 0
            let result = contents.withLock { contents in
                generation = contents.generation
                return attempt(&contents.progress)
            }
            if let result { return result }
            guard ContinuousClock.now < deadline else { return nil }
            await sleep(whileGenerationIs: generation, until: deadline)
        }
    }

    /// Returns once a step is appended after `generation`, at `deadline`, or when the task is cancelled.
    @usableFromInline
    func sleep(whileGenerationIs generation: UInt64, until deadline: ContinuousClock.Instant) async {
        let id = contents.withLock { contents in
            defer { contents.nextWaiter &+= 1 }
            return contents.nextWaiter
        }
        let alarm = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            self?.wake(id)
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let asleep = contents.withLock { contents in
                    // After the alarm rang (the deadline passed) or the task was cancelled, nobody would wake this waiter.
                    guard contents.generation == generation, !Task.isCancelled, ContinuousClock.now < deadline
                    else { return false }
                    contents.waiters[id] = continuation
                    return true
                }
                if !asleep { continuation.resume() }
            }
        } onCancel: {
            wake(id)
        }
        alarm.cancel()
    }

    private func wake(_ id: UInt64) {
        contents.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}
