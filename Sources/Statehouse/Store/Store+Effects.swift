extension Store {
    /// Cancels every running effect marked with `id`, from outside a reducer: what a reducer's
    /// ``Effect/cancel(id:)`` does.
    ///
    /// Effective when it returns: no action those effects sent and the store has not applied yet is applied (nor
    /// one they send later), their tasks are cancelled, a concatenation marked with `id` starts no further part,
    /// and the throttle window of `id` ends, its kept effect dropped. An action being applied on another thread
    /// at that moment completes.
    ///
    /// Effects run in the store whose reducer returned them: on a scoped store, this cancels them in the store it
    /// was scoped from (its root, for a scope of a scope), where its actions' effects run.
    ///
    /// ```swift
    /// store.dispatch(.startTimer)            // returns .run { … }.cancellable(id: TimerID())
    /// store.cancelEffects(id: TimerID())     // the app goes to the background
    /// ```
    ///
    /// - Parameter id: The id given to ``Effect/cancellable(id:cancelInFlight:)``, or to a debounce or throttle.
    public func cancelEffects(id: some Hashable & Sendable) {
        cancelEffects(anyID: AnyHashableSendable(id))
    }

    /// Waits until no effect is running, including those started by actions that effects sent meanwhile.
    ///
    /// An effect waiting on a clock (a debounce, a throttle window with an effect kept) is running: with a manual
    /// clock, advance it first. On a scoped store, this waits for the store it was scoped from, where its actions'
    /// effects run.
    public func finishEffects() async {
        if case .scope(let upstream) = role { return await upstream.effectsHost.finishEffects() }
        // An effect that ended may have queued an action that starts another: wait for the queue too, until
        // neither has anything left. No task running, then an idle queue, means nothing is left: a task queues its
        // actions before it ends.
        while true {
            await effects.finish()
            await waitForQueuedWork()
            if effects.runningCount == 0, inbox.isIdle { return }
        }
    }

    /// The number of effects running now; on a scoped store, in the store it was scoped from.
    public var runningEffects: Int {
        switch role {
        case .root: effects.runningCount
        case .scope(let upstream): upstream.effectsHost.runningEffects
        }
    }
}

extension Store: EffectsHost {
    @usableFromInline
    func cancelEffects(anyID id: AnyHashableSendable) {
        switch role {
        case .root: effects.cancel(id: id)
        case .scope(let upstream): upstream.effectsHost.cancelEffects(anyID: id)
        }
    }
}

/// A store that runs effects: the one with the reducer. A scoped store has none of its own: its actions are reduced
/// by the store it was scoped from, whose effects they are, so it hands effect requests to that store.
@usableFromInline
protocol EffectsHost: Sendable {
    func cancelEffects(anyID id: AnyHashableSendable)
    func finishEffects() async
    var runningEffects: Int { get }
}
