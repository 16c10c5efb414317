/// Work a reducer asks for after it has changed the state: actions to send back, async work, cancellation.
///
/// ```swift
/// case .refresh:
///     state.isLoading = true
///     return .run { send in
///         let items = try await api.items()
///         await send(.loaded(items))
///     }
///     .cancellable(id: "refresh", cancelInFlight: true)
/// case .cancelRefresh:
///     return .cancel(id: "refresh")
/// ```
///
/// Effects run after the reducer returns and after subscribers heard of the change. Actions they send go through
/// the middleware and the reducer like any other, in order; a `.send` effect's action is applied before the
/// `dispatch` that returned it returns.
///
/// Effects combine: `merge` runs several at once, `concatenate` one after another,
/// ``map(_:)`` turns a child feature's effect into its parent's, and ``debounce(id:for:clock:)`` and
/// ``throttle(id:for:clock:latest:)`` limit how often one runs, on a clock a test can drive.
public struct Effect<Action: Sendable>: Sendable {
    /// What the ``EffectRunner`` does; the public constructors build these.
    @usableFromInline
    package enum Operation: Sendable {
        case send(Action)
        case run(Run)
        case cancellable(Effect, id: AnyHashableSendable, cancelInFlight: Bool)
        case cancel(id: AnyHashableSendable)
        /// Each effect once the work of the one before it is done.
        case concatenate([Effect])
        /// The effect, marked `id`, unless another throttled by `id` ran less than a window ago.
        case throttle(Effect, id: AnyHashableSendable, window: EffectWindow, latest: Bool)
    }

    /// What to do, in order; empty for ``none``.
    @usableFromInline package let operations: [Operation]

    @inlinable
    package init(operations: [Operation]) {
        self.operations = operations
    }

    /// Nothing to do.
    @inlinable
    public static var none: Self { Self(operations: []) }

    /// Sends `action` back to the store right after the current one.
    public static func send(_ action: Action) -> Self {
        Self(operations: [.send(action)])
    }

    /// Runs every effect in `effects`.
    public static func merge(_ effects: Self...) -> Self {
        merge(effects)
    }

    /// Runs every effect in `effects`.
    public static func merge(_ effects: [Self]) -> Self {
        Self(operations: effects.flatMap(\.operations))
    }

    /// Cancels every running effect marked with `id`.
    public static func cancel(id: some Hashable & Sendable) -> Self {
        Self(operations: [.cancel(id: AnyHashableSendable(id))])
    }

    /// Marks this effect with `id`, so that ``cancel(id:)`` can stop it.
    ///
    /// - Parameters:
    ///   - id: Any hashable value; effects marked with equal ids are cancelled together.
    ///   - cancelInFlight: Cancel the effects already running with `id` before starting this one (for "only the
    ///     latest search matters").
    public func cancellable(id: some Hashable & Sendable, cancelInFlight: Bool = false) -> Self {
        guard !operations.isEmpty else { return self }
        return Self(operations: [.cancellable(self, id: AnyHashableSendable(id), cancelInFlight: cancelInFlight)])
    }

    /// Whether the effect does nothing.
    @inlinable
    public var isNone: Bool { operations.isEmpty }
}

/// Sends actions from an effect back to its store.
public struct Send<Action: Sendable>: Sendable {
    @usableFromInline let deliver: @Sendable (Action, EffectHandle?) -> Void
    /// For a cancellable effect: keeps it findable by its id while any copy of this `Send` exists, so that an effect
    /// that kept its `Send` (for a callback, a timer) can still be cancelled after its task ended.
    @usableFromInline let lease: EffectLease?

    /// - Parameter deliver: Takes each action and the effect that sent it; it must call `endWork()` on that
    ///   effect's handle once the action has been applied or dropped.
    @inlinable
    package init(_ deliver: @escaping @Sendable (Action, EffectHandle?) -> Void) {
        self.deliver = deliver
        self.lease = nil
    }

    /// Shares `lease` (see `sending(through:)`) instead of taking a new one.
    init(_ deliver: @escaping @Sendable (Action, EffectHandle?) -> Void, lease: EffectLease?) {
        self.deliver = deliver
        self.lease = lease
    }

    /// The same destination, for the actions of the effect `origin`.
    func from(_ origin: EffectHandle?) -> Self {
        Self(deliver, lease: origin.map(EffectLease.init))
    }

    /// The cancellable effect sending, if any.
    var origin: EffectHandle? { lease?.handle }

    /// Sends `action`, unless the effect sending it was cancelled (then, and if it is cancelled before the store
    /// gets to the action, the action is dropped).
    ///
    /// Queues the action and returns: unlike ``Store/dispatch(_:)`` from outside the store, it does not wait for the
    /// action to be applied, so that an effect never waits for the store's work (which may be cancelling it). The
    /// store applies its actions in order with the rest.
    public func callAsFunction(_ action: Action) {
        guard let origin = lease?.handle else { return deliver(action, nil) }
        guard !origin.isCancelled else { return }
        origin.beginWork()
        deliver(action, origin)
    }
}

/// A hashable, sendable identifier of any type: effect ids are chosen by the app.
@usableFromInline
package struct AnyHashableSendable: Hashable, Sendable {
    private let base: any Hashable & Sendable
    private let isEqual: @Sendable (any Hashable & Sendable) -> Bool

    package init<Base: Hashable & Sendable>(_ base: Base) {
        self.base = base
        self.isEqual = { ($0 as? Base) == base }
    }

    /// The identifier, if it is a `Base`.
    func unwrapped<Base>(as _: Base.Type) -> Base? {
        base as? Base
    }

    @usableFromInline
    package static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.isEqual(rhs.base)
    }

    @usableFromInline
    package func hash(into hasher: inout Hasher) {
        base.hash(into: &hasher)
    }
}
