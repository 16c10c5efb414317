extension Effect {
    /// Runs the effects one after another: each starts once everything the one before it started has finished.
    ///
    /// "Finished" means the effect's tasks have returned, including those of concatenations nested in it; actions
    /// it sent are then queued, so all of an effect's actions reach the store before any of the next one's. Effects
    /// that start no task (``send(_:)``, ``cancel(id:)``) start together with the next, as in `merge`.
    ///
    /// Cancelling an id that marks the concatenation (``cancellable(id:cancelInFlight:)`` around it, or around the
    /// effect that contains it) stops the part that is running and starts no later part. Cancelling an id that
    /// marks one part only stops that part; the next one then starts.
    ///
    /// ```swift
    /// case .save(let draft):
    ///     return .concatenate(
    ///         .run { _ in try await api.save(draft) },
    ///         .run { send in send(.loaded(try await api.load())) }
    ///     )
    ///     .cancellable(id: "save")
    /// ```
    ///
    /// - Parameter effects: The effects, in the order they run.
    public static func concatenate(_ effects: Self...) -> Self {
        concatenate(effects)
    }

    /// Runs the effects one after another; see `concatenate`.
    ///
    /// - Parameter effects: The effects, in the order they run.
    public static func concatenate(_ effects: [Self]) -> Self {
        let effects = effects.filter { !$0.isNone }
        switch effects.count {
        case 0: return .none
        case 1: return effects[0]
        default: return Self(operations: [.concatenate(effects)])
        }
    }
}
