import Dispatch
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
    @usableFromInline let inbox = Inbox<StoreWork<State, Action>>(
        shareForOthers: StoreWork<State, Action>.shareForOthers
    )
    @usableFromInline let observation = ObservationGate()
    /// A root store, which applies actions, or a scoped store, a view of part of its parent (see ``StoreRole``).
    @usableFromInline let role: StoreRole<State, Action>
    /// The one route of this store's actions into the middleware and the reducer (see ``route(_:)``): a root store's
    /// middleware then reducer, folded into one function; a scoped store's parent's, the action converted and
    /// dispatched to the parent. Kept here, not in ``role``, because every dispatch calls it: a closure in the
    /// store's own `let` is called as it is, where one reached through the role's payload is retained and released
    /// around the call.
    @usableFromInline let pipeline: @Sendable (Store, Action) -> Void
    /// The scoped stores showing part of this store's state.
    @usableFromInline let followers: ScopeFollowers<State>
    @usableFromInline let effects = EffectRunner<Action>()
    /// Removes a cancelled subscriber; made by the inlined initializer so that it runs specialized code (see
    /// `ContainerLink.removeListener`).
    @usableFromInline let removeSubscriber: @Sendable (Store, StoreSubscriptionBase) -> Void
    @usableFromInline let recorder = ActionRecorder<State, Action>()

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
            role: .root(RootParts(reducer: reducer, persistence: nil)),
            pipeline: Middleware.chain(middleware) { store, action in store.apply(action, with: reducer) }
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

    /// A scoped store, linked to its parent by `upstream`; it reads its state through the parent until it follows.
    convenience init(scope upstream: ScopeUpstream<State, Action>) {
        let toParent = upstream.actions.dispatch
        self.init(state: nil, role: .scope(upstream), pipeline: { _, action in toParent(action) })
    }

    /// - Parameters:
    ///   - state: The initial state; `nil` for a scoped store, which reads its parent's.
    ///   - role: A root store, or a scoped store with its link to its parent.
    ///   - pipeline: Applies an action: the middleware and the reducer, or the parent's.
    @inlinable
    init(state: State?, role: StoreRole<State, Action>, pipeline: @escaping @Sendable (Store, Action) -> Void) {
        self.core = Locked(StoreState(state: state))
        self.role = role
        self.pipeline = pipeline
        self.followers = ScopeFollowers(tree: role.scopeTree)
        self.removeSubscriber = { store, subscription in
            // What was removed is let go after the lock is released: the listener may hold the last reference to
            // another token of this store. (Not `withExtendedLifetime`: its generic destroy of the optional cost
            // about 200 instructions.)
            guard let removal = store.core.withLock({ $0.remove(subscription) }) else { return }
            if removal.wasLast, case .scope(let upstream) = store.role { store.lostItsLastSubscriber(upstream) }
        }
    }

    deinit {
        switch role {
        case .root(let root):
            root.persistence?.ownerDidEnd()
        case .scope(let upstream):
            if upstream.isFollowing {
                upstream.tree.withLock { tree in
                    _ = upstream.takeLink()
                    upstream.parentMayStop(&tree)
                }
            }
        }
        effects.cancelAll()
        // Each subscription left lives: its `OwningToken` cancels it, which removes it, before letting it go.
        for case let entry? in core.withLock({ $0.removeAll() }) {
            entry.subscription.withoutRetaining { $0.cancel() }
        }
    }

    /// For a persisted root store: what writes its state to its storage.
    @inlinable
    var persistence: (any Persisting<State>)? {
        switch role {
        case .root(let root): root.persistence
        case .scope: nil
        }
    }

    /// For a scoped store: its link to its parent. For tests and diagnostics; the store's own code asks ``role``.
    var upstream: ScopeUpstream<State, Action>? {
        switch role {
        case .root: nil
        case .scope(let upstream): upstream
        }
    }

    /// The current state. Safe to read from any thread.
    ///
    /// A scoped store reads it through its parent (see <doc:TheStore>).
    @inlinable
    public var state: State {
        reading { $0 }
    }

    /// What `part` picks from the current state, read as ``state`` reads it (and, for Observation, a read of it), but
    /// under the lock, without copying the rest of the state: how a scoped store reads a part it can load by offset
    /// through this one. `part` must run no code of the caller's (a getter could read this store, under its lock).
    @inlinable
    func reading<Part: Sendable>(_ part: (State) -> Part) -> Part {
        observation.accessed()
        switch role {
        case .root:
            return core.withLock { part($0.state) }
        case .scope(let upstream):
            // A following scope's copy lags its parent between the parent's change and the follow: a read that used
            // the copy once the scope follows, and the parent before, could go backwards. Only an `ifLet` scope,
            // which must show the last non-`nil` part, and follows from the start to its end, reads its copy.
            guard upstream.isPinned else { return part(upstream.read()) }
            return core.withLock { $0.followedState.map(part) } ?? part(upstream.read())
        }
    }

    /// Sends `action` to the reducer, through the middleware, and returns once it is applied.
    ///
    /// Called from outside the store's work, `dispatch` returns after the action — and what applying it sends
    /// synchronously: nested dispatches, `.send` effects — has been applied and the subscribers told, so the caller
    /// reads its own write in ``state``. On an idle store the caller does this work itself, at once. On a busy one it
    /// waits for the work queued before its action, and for no work queued after it beyond a small bounded share:
    /// callers take turns doing the work, so no caller is held for other threads' work without bound, and producers
    /// faster than the store wait their turn instead of queueing without bound.
    ///
    /// Called from inside the store's work (a reducer, middleware, subscriber or scope, on the thread doing it), the
    /// action is queued and applied after the current one, first in first out, and `dispatch` returns at once:
    /// waiting for it there would wait for itself. The same holds, to avoid a deadlock, when the caller is doing
    /// another store's work whose worker waits, directly or not, for this one. An effect's `send` queues its action
    /// and does not wait; `await` ``send(_:)`` waits without blocking a thread. See <doc:TheStore>.
    ///
    /// Do not dispatch while holding a lock or waiting on a thread that this store's subscribers or middleware also
    /// need: like a lock, a waiting `dispatch` then waits for ever.
    @inlinable
    public func dispatch(_ action: Action) {
        // A scoped store's route is its parent's `dispatch`, which waits for the parent's loop as this one would.
        if case .scope = role { return route(action) }
        // An idle store, the common case, applies the action at once, without wrapping it in a `StoreWork` for the
        // queue: copying and destroying that generic enum cost more than the reducer.
        enter({ route(action) }, orQueue: .action(action), waits: .waiting)
    }

    /// ``dispatch(_:)`` for the middleware named in `source`, which the recording and the taps note.
    @usableFromInline
    func dispatch(_ action: Action, from source: ActionSource) {
        if case .scope = role { return route(action) }
        enter(
            { recorder.applying(from: source) { route(action) } },
            orQueue: .middlewareAction(action, source: source), waits: .waiting
        )
    }

    /// The one route of an action into the middleware and the reducer, wherever it comes from (`dispatch`, `send`,
    /// an effect, the queue): the ``pipeline``. A scoped store has none of its own: its action goes, converted, to its
    /// parent, and takes the parent's route.
    @inlinable @inline(__always)
    func route(_ action: Action) {
        pipeline(self, action)
    }

    /// The one way into the store's work loop, which does one thing at a time, in order: every action, registration,
    /// replacement of the state and scoped store's work comes in here.
    ///
    /// If the store is idle, the caller claims it with one atomic operation, does `now` at once, then what was queued
    /// meanwhile, up to its share (see ``TurnQueue``): no `StoreWork` is made, no closure escapes. If it is busy, the
    /// work `later` makes is queued, and the caller waits for it as `waits` says, or does it on its turn. A scoped
    /// store enters its parent's loop instead: one loop serializes a store and all its scopes.
    ///
    /// - Returns: Whether the caller did `now` at once, and, for a caller that suspends, the record to await.
    @inlinable @inline(__always) @discardableResult
    func enter(
        _ now: () -> Void,
        orQueue later: @autoclosure () -> StoreWork<State, Action>,
        waits: Arrival
    ) -> Entered {
        if case .scope(let upstream) = role {
            return upstream.enterParent(now, { [self] in bodyForParent(later()) }, waits)
        }
        guard inbox.claimIfIdle() else { return enterBusy(later(), waits: waits) }
        now()
        finishTurn()
        return .didNow
    }

    /// ``enter(_:orQueue:waits:)`` on a busy root store: claims it if it becomes idle soon (a caller that blocks
    /// anyway), else queues `work` and waits for it, or for its turn to do it.
    @inlinable
    func enterBusy(_ work: StoreWork<State, Action>, waits: Arrival) -> Entered {
        if waits == .waiting, inbox.claimSoon() {
            perform(work)
            finishTurn()
            return .handedOn
        }
        switch inbox.submit({ work }, waiting: waits.waiting(for: self)) {
        case .performNow(let work):
            perform(work)
            finishTurn()
        case .queued:
            break
        case .wait(let caller):
            if waits == .suspending { return .suspend(caller) }
            if let next = inbox.wait(caller) { keepWorking(from: next) }
        }
        return .handedOn
    }

    /// A scoped store's work, as its parent's loop runs it.
    @usableFromInline
    func bodyForParent(_ work: StoreWork<State, Action>) -> @Sendable () -> Void {
        if case .run(let body) = work { return body }
        return { [self] in perform(work) }
    }

    /// Queues `work` behind the store's other work, or does it now if the store is idle (see
    /// ``enter(_:orQueue:waits:)``).
    /// - Parameter waits: How a caller from outside the store's work waits for `work` and what it queues.
    @inlinable
    func submit(_ work: StoreWork<State, Action>, waits: Arrival = .detached) {
        enter({ perform(work) }, orQueue: work, waits: waits)
    }

    /// Runs `body` in order with the store's other work, waiting for it as `waits` says (see
    /// ``enter(_:orQueue:waits:)``).
    @inlinable
    func run(_ body: @escaping @Sendable () -> Void, waits: Arrival = .waiting) {
        enter(body, orQueue: .run(body), waits: waits)
    }

    /// Ends the worker's turn: gives the store back if nothing was queued since it claimed it, else goes on with
    /// what is queued, until the turn ends.
    @inlinable @inline(__always)
    func finishTurn() {
        if inbox.finishIfNothingQueued() { return }
        keepWorking(from: inbox.next())
    }

    /// Does `next`, and what follows it, until the turn ends: nothing is left, another caller's turn starts, or a
    /// background thread takes over.
    @usableFromInline
    func keepWorking(from next: TurnQueue<StoreWork<State, Action>>.Next) {
        var next = next
        while true {
            switch next {
            case .perform(let work):
                perform(work)
                next = inbox.next()
            case .finished, .handTurn:
                return
            case .handOff:
                return runInBackground { [self] in keepWorking(from: inbox.startTurn()) }
            }
        }
    }

    @inlinable @inline(__always)
    func perform(_ work: StoreWork<State, Action>) {
        switch work {
        case .action(let action):
            route(action)
        case .effectAction(let action, let origin):
            if let origin {
                defer { origin.endWork() }
                guard !origin.isCancelled else { return }
            }
            recorder.applying(from: .effect) { route(action) }
        case .middlewareAction(let action, let source):
            recorder.applying(from: source) { route(action) }
        case .run(let body):
            body()
        case .replaceState(let newState):
            commit { core in
                forgetUndoHistory()
                recorder.replaced(.travel, with: newState)
                return ((), core.replace(with: newState))
            }
        case .takeStoredState(let newState, let count, let refused):
            if !takeStoredState(newState, ifUnchangedSince: count) { refused() }
        }
    }

    /// The end of the pipeline: reduce, tell the subscribers, start the effect.
    @inlinable
    func apply(_ action: Action, with reducer: (inout State, Action) -> Effect<Action>) {
        let effect = commit { core in
            let (effect, round) = core.reduce(action, with: reducer)
            if recorder.isWatched { recorder.applied(action, leaving: core.state) }
            return (effect, round)
        }
        if !effect.isNone {
            effects.start(effect, send: Send { [weak self] action, origin in
                guard let self else { return origin?.endWork() ?? () }
                submit(.effectAction(action, origin: origin))
            })
        }
    }

    /// Changes the state under the lock with `change`, which returns whom to tell; then tells persistence, the scoped
    /// stores, their subscribers and this store's, in that order. Runs on the processor.
    @inlinable @inline(__always)
    func commit<Result>(_ change: (inout StoreState<State>) -> (Result, DeliveryRound<State>?)) -> Result {
        let (result, round, scopes) = commitWithoutTelling(change)
        tell(round, after: scopes)
        return result
    }

    /// Tells the scoped stores' subscribers, then this store's: every view is up to date before anyone hears.
    @inlinable @inline(__always)
    func tell(_ round: DeliveryRound<State>?, after scopes: [PendingDelivery]) {
        for scope in scopes { scope.deliver() }
        round?.deliver(on: currentThreadIdentity())
    }

    /// ``commit(_:)`` up to the subscribers: returns whom to tell, this store's subscribers and its scopes'.
    @inlinable @inline(__always)
    func commitWithoutTelling<Result>(
        _ change: (inout StoreState<State>) -> (Result, DeliveryRound<State>?)
    ) -> (Result, DeliveryRound<State>?, [PendingDelivery]) {
        let (result, round, committed) = observation.changing {
            core.withLock { core in
                let (result, round) = change(&core)
                // Asked under the lock that a scoped store starts following under (see `ScopeUpstream`): one that
                // started before this change follows it, one that starts after starts from it.
                let needsState = persistence != nil || !followers.isEmpty
                return (result, round, needsState ? core.followedState.map { ($0, core.changeCount) } : nil)
            }
        }
        guard let (state, count) = committed else { return (result, round, []) }
        persistence?.changed(state, count: count)
        return (result, round, followers.isEmpty ? [] : followers.follow(state))
    }

    /// Shows a state another process stored, if this store has not changed since `count` (an action applied
    /// meanwhile is newer, and wins): subscribers are told, nothing is written back. The persistence learns that the
    /// state is saved under the lock that counts it (see `Persisting.tookStoredValue(_:count:)`).
    /// - Returns: Whether the state was taken.
    @usableFromInline
    func takeStoredState(_ newState: State, ifUnchangedSince count: UInt64) -> Bool {
        let taken = observation.changing {
            core.withLock { core -> (DeliveryRound<State>?, replaced: PersistedSnapshot<State>?)? in
                guard core.changeCount == count else { return nil }
                forgetUndoHistory()
                recorder.replaced(.storage, with: newState)
                let round = core.replace(with: newState)
                return (round, persistence?.tookStoredValue(newState, count: core.changeCount))
            }
        }
        guard let (round, replaced) = taken else { return false }
        // Let go here, outside the lock.
        withExtendedLifetime(replaced) {}
        tell(round, after: followers.isEmpty ? [] : followers.follow(newState))
        return true
    }

    /// A scoped store's side of following its parent: takes `newState`, its part of the parent's new state, and has
    /// its own scopes follow.
    /// - Returns: What tells its subscribers and its scopes', once the parent's other scopes have followed too.
    func follow(_ newState: State) -> PendingDelivery? {
        let ((), round, scopes) = commitWithoutTelling { ((), $0.follow(newState)) }
        guard round != nil || !scopes.isEmpty else { return nil }
        return PendingDelivery { [self] in tell(round, after: scopes) }
    }

    /// Queues `newState` to replace the state, in order with the other work, and to be written to the storage.
    func replaceState(_ newState: State) {
        submit(.replaceState(newState), waits: .waiting)
    }
}

extension Store: Observable {}

extension Store: TurnTaking {
    @usableFromInline
    var workerThread: UInt { inbox.workerThread }
}
