import Observation
import Synchronization

/// One place for an app's state, changed only by actions.
///
/// ```swift
/// struct Counter: Equatable, Sendable { var count = 0; var name = "" }
/// enum CounterAction: Sendable { case increment, rename(String) }
///
/// let store = Store(initialState: Counter()) { (state: inout Counter, action: CounterAction) in
///     switch action {
///     case .increment: state.count += 1
///     case .rename(let name): state.name = name
///     }
/// }
/// let token = store.subscribe(\.count) { print("count:", $0) }   // count: 0
/// store.dispatch(.increment)                                     // count: 1
/// store.dispatch(.rename("clicks"))                              // (count did not change: no call)
/// ```
///
/// A store does one thing at a time, in order. ``dispatch(_:)`` may be called from any thread, and from reducers,
/// middleware and subscribers: an action dispatched while the store is busy is queued and applied after the current
/// one, first in first out. Subscribers see every state they select from, in order, never a stale one, and never the
/// same `Equatable` selection twice in a row. See <doc:TheStore>.
///
/// The reducer runs with the store's state locked: it must not read ``state`` (use the `inout` state it is given).
/// It may dispatch, but returning an ``Effect`` (`.send(action)`) says the same thing more plainly.
///
/// `Store` conforms to `Observable`: SwiftUI views, and `withObservationTracking` on any platform, track ``state``.
public final class Store<State: Sendable, Action: Sendable>: Sendable {
    @usableFromInline let core: Locked<StoreState<State>>
    @usableFromInline let inbox = Locked(StoreInbox<State, Action>())
    @usableFromInline let registrar = ObservationRegistrar()
    /// The middleware and then the reducer, folded into one function; `nil` for a scoped store, which forwards.
    @usableFromInline let pipeline: (@Sendable (Store, Action) -> Void)?
    /// For a scoped store: sends its actions, converted, to the parent store.
    @usableFromInline let forward: (@Sendable (Action) -> Void)?
    @usableFromInline let reducer: (@Sendable (inout State, Action) -> Effect<Action>)?
    @usableFromInline let effects = EffectRunner<Action>()
    /// Removes a cancelled subscriber; made by the inlined initializer so that it runs specialized code (see
    /// `StateContainer.removeListener`).
    @usableFromInline let removeSubscriber: @Sendable (Store, StoreSubscriptionBase) -> Void
    @usableFromInline let recorder = ActionRecorder<State, Action>()
    /// For a scoped store: its subscription to the parent.
    let upstream = Locked<SubscriptionToken?>(nil)
    /// For a persisted store: what writes its state to its storage.
    @usableFromInline let persistence: StatePersistence<State>?

    /// Creates a store whose reducer may return an ``Effect``.
    ///
    /// Disfavored so that a reducer closure that returns nothing (say, a lone `if` statement) picks the `Void`
    /// initializer instead of being ambiguous; a closure that returns an effect can only match this one.
    ///
    /// - Parameters:
    ///   - initialState: The state until the first action.
    ///   - reducer: Applies an action to the state, and says what to do next.
    ///   - middleware: Sees every action before the reducer, the first outermost; see ``Middleware``.
    @inlinable @_disfavoredOverload
    public convenience init(
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Effect<Action>,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            state: initialState,
            reducer: reducer,
            pipeline: Middleware.chain(middleware) { store, action in store.apply(action, with: reducer) },
            forward: nil
        )
    }

    /// Creates a store whose reducer only changes the state.
    @inlinable
    public convenience init(
        initialState: State,
        reducer: @escaping @Sendable (inout State, Action) -> Void,
        middleware: [Middleware<State, Action>] = []
    ) {
        self.init(
            initialState: initialState,
            reducer: { state, action in
                reducer(&state, action)
                return .none
            },
            middleware: middleware
        )
    }

    @inlinable
    init(
        state: State,
        reducer: (@Sendable (inout State, Action) -> Effect<Action>)?,
        pipeline: (@Sendable (Store, Action) -> Void)?,
        forward: (@Sendable (Action) -> Void)?,
        persistence: StatePersistence<State>? = nil
    ) {
        self.core = Locked(StoreState(state: state))
        self.reducer = reducer
        self.pipeline = pipeline
        self.forward = forward
        self.persistence = persistence
        self.removeSubscriber = { store, subscription in
            store.core.withLock { $0.remove(subscription) }
        }
    }

    deinit {
        persistence?.flush(finalValue: core.withLock { $0.state })
        effects.cancelAll()
        for subscription in core.withLock({ $0.removeAll() }) {
            subscription.cancel()
        }
    }

    /// The current state. Safe to read from any thread.
    @inlinable
    public var state: State {
        registrar.accessed()
        return core.withLock { $0.state }
    }

    /// Sends `action` to the reducer, through the middleware.
    ///
    /// From a thread where the store is idle, the action is applied and the subscribers told before `dispatch`
    /// returns. While the store is busy — on another thread, or on this one (a reducer, middleware, subscriber or
    /// effect dispatching) — the action is queued and applied after the current one.
    @inlinable
    public func dispatch(_ action: Action) {
        if let forward {
            forward(action)
        } else {
            submit(.action(action))
        }
    }

    /// Does `work` now if the store is idle, then everything queued meanwhile; or queues it for the processor.
    @inlinable
    func submit(_ work: StoreInbox<State, Action>.Work) {
        var next = inbox.withLock { $0.submit(work) }
        while let work = next {
            perform(work)
            next = inbox.withLock { $0.next() }
        }
    }

    @inlinable
    func perform(_ work: StoreInbox<State, Action>.Work) {
        switch work {
        case .action(let action):
            pipeline?(self, action)
        case .subscribe(let register):
            register()
        case .replaceState(let newState, let writeBack):
            let round = registrar.changing { core.withLock { $0.replace(with: newState) } }
            if writeBack { persistence?.changed() }
            round?.deliver(on: currentThreadIdentity())
        }
    }

    /// The end of the pipeline: reduce, tell the subscribers, start the effect.
    @inlinable
    func apply(_ action: Action, with reducer: (inout State, Action) -> Effect<Action>) {
        let (effect, round) = registrar.changing { core.withLock { $0.reduce(action, with: reducer) } }
        persistence?.changed()
        if recorder.isRecording { recorder.record(action) }
        round?.deliver(on: currentThreadIdentity())
        if !effect.isNone { effects.start(effect, send: Send { [weak self] in self?.dispatch($0) }) }
    }

    /// Queues `newState` to replace the state, in order with the other work; `writeBack: false` for a state read
    /// from the storage.
    func replaceState(_ newState: State, writeBack: Bool = true) {
        submit(.replaceState(newState, writeBack: writeBack))
    }

    /// Waits until no effect is running, including those started by actions that effects sent meanwhile.
    public func finishEffects() async {
        await effects.finish()
    }

    /// The number of effects running now.
    public var runningEffects: Int {
        effects.runningCount
    }
}

extension Store: Observable {}
