extension Effect {
    /// Runs `operation` in a task; it may send any number of actions back with the ``Send`` it is given.
    ///
    /// Actions sent after the effect was cancelled (``cancel(id:)``, ``Store/cancelEffects(id:)``) are dropped,
    /// wherever they are sent from. The operation may throw: a `CancellationError`, or any error thrown once the
    /// effect was cancelled, is how cancellation ends it and is ignored; any other error goes to `handler`, which
    /// can turn it into an action. Without a handler, the error is reported to ``StatehouseDiagnostics`` as
    /// ``StatehouseDiagnostic/Kind/unhandledEffectError``: errors are the effect's to handle.
    ///
    /// ```swift
    /// case .load:
    ///     return .run { send in
    ///         let items = try await api.items()
    ///         send(.loaded(items))
    ///     } catch: { error, send in
    ///         send(.failed("\(error)"))
    ///     }
    /// ```
    ///
    /// - Parameters:
    ///   - priority: The priority of the task; that of the dispatching task if `nil`.
    ///   - operation: The work; sends actions back with the ``Send`` it is given.
    ///   - handler: Called with an error `operation` threw (unless the effect was cancelled), and a ``Send`` that
    ///     belongs to the same effect.
    public static func run(
        priority: TaskPriority? = nil,
        operation: @escaping @Sendable (_ send: Send<Action>) async throws -> Void,
        catch handler: (@Sendable (_ error: any Error, _ send: Send<Action>) async -> Void)? = nil
    ) -> Self {
        Self(operations: [.run(Run(priority: priority, operation: operation, handler: handler))])
    }

    /// Runs `operation` in a task: the same as ``run(priority:operation:catch:)``, for a function passed by name.
    ///
    /// Kept so that `.run(ticker)` still compiles; disfavored so that `.run { send in … }` means the other.
    @_disfavoredOverload
    public static func run(_ operation: @escaping @Sendable (_ send: Send<Action>) async -> Void) -> Self {
        run(operation: operation)
    }

    /// The work of a ``run(priority:operation:catch:)`` effect.
    @usableFromInline
    package struct Run: Sendable {
        let priority: TaskPriority?
        let operation: @Sendable (Send<Action>) async throws -> Void
        let handler: (@Sendable (any Error, Send<Action>) async -> Void)?

        /// Runs the operation with `send`, and handles what it throws.
        func perform(with send: Send<Action>) async {
            do {
                try await operation(send)
            } catch {
                // Cancelling an effect ends it by throwing; that is not a failure to report.
                if error is CancellationError || Task.isCancelled || send.origin?.isCancelled == true { return }
                if let handler {
                    await handler(error, send)
                } else {
                    StatehouseDiagnostics.report(.unhandledEffectError(error, action: Action.self))
                }
            }
        }

        /// The same work for an effect whose actions `transform` turns into `NewAction`s.
        func map<NewAction: Sendable>(_ transform: @escaping @Sendable (Action) -> NewAction) -> Effect<NewAction>.Run {
            let operation = self.operation
            var mappedHandler: (@Sendable (any Error, Send<NewAction>) async -> Void)?
            if let handler {
                mappedHandler = { error, send in await handler(error, send.sending(through: transform)) }
            }
            return Effect<NewAction>.Run(
                priority: priority,
                operation: { send in try await operation(send.sending(through: transform)) },
                handler: mappedHandler
            )
        }
    }
}
