extension Effect {
    /// Runs this effect after `duration` on `clock`, unless another effect debounced with the same `id` comes
    /// first: only the last of a burst runs.
    ///
    /// Each debounced effect cancels the one pending (or running) with `id` and waits `duration`; the effect that
    /// is still there at the end of its wait runs, marked with `id`. ``cancel(id:)`` cancels a pending one too.
    /// Time is read from `clock` only, so a test passes a manual clock (`StatehouseTesting.ManualClock`) and
    /// advances it.
    ///
    /// ```swift
    /// case .queryChanged(let query):
    ///     state.query = query
    ///     return .run { send in send(.results(try await api.search(query))) }
    ///         .debounce(id: "search", for: .milliseconds(300), clock: environment.clock)
    /// ```
    ///
    /// - Parameters:
    ///   - id: Marks the debounced effect; equal ids debounce each other.
    ///   - duration: How long no other effect with `id` must come before this one runs.
    ///   - clock: The clock to wait on.
    public func debounce(id: some Hashable & Sendable, for duration: Duration, clock: some Clock<Duration>) -> Self {
        // A wait then the effect, as one cancellable unit: the next debounce's `cancelInFlight` cancels the wait,
        // and a cancelled concatenation starts no later part.
        Self.concatenate(Self.run { _ in try await clock.sleep(for: duration) }, self)
            .cancellable(id: id, cancelInFlight: true)
    }

    /// Runs this effect at once unless another throttled with the same `id` ran less than `duration` ago; keeps
    /// one of those that come meanwhile for the end of that window.
    ///
    /// The first effect throttled with `id` runs at once and opens a window of `duration` on `clock`. During the
    /// window, effects throttled with `id` do not run: the first of them is kept (the last, if `latest`), the others
    /// are dropped. At the end of the window the kept effect runs and opens a new window; with none kept, the next
    /// effect runs at once. The effects that run are marked with `id`, and ``cancel(id:)`` ends the window and
    /// drops the kept effect.
    ///
    /// ```swift
    /// case .scrolled(let offset):
    ///     return .run { _ in try await api.savePosition(offset) }
    ///         .throttle(id: "save-position", for: .seconds(1), clock: environment.clock, latest: true)
    /// ```
    ///
    /// - Parameters:
    ///   - id: Marks the throttled effects; the window is per id.
    ///   - duration: How long a window lasts.
    ///   - clock: The clock that measures the window.
    ///   - latest: Keep the last effect that comes during a window rather than the first.
    public func throttle(
        id: some Hashable & Sendable,
        for duration: Duration,
        clock: some Clock<Duration>,
        latest: Bool
    ) -> Self {
        guard !isNone else { return self }
        return Self(operations: [
            .throttle(self, id: AnyHashableSendable(id), window: EffectWindow(duration, on: clock), latest: latest)
        ])
    }
}

/// The time windows of a throttle, with its clock's type erased: an ``Effect`` is not generic over clocks.
@usableFromInline
package struct EffectWindow: Sendable {
    /// A window that opened at some instant on the clock.
    struct Opened: Sendable {
        /// Whether the clock has not reached the window's end yet.
        let isOpen: @Sendable () -> Bool
        /// Returns once the clock reaches the window's end; throws `CancellationError` if cancelled first.
        let sleepUntilEnd: @Sendable () async throws -> Void
    }

    /// Opens a window now.
    let open: @Sendable () -> Opened

    init<C: Clock<Duration>>(_ duration: Duration, on clock: C) {
        open = {
            let end = clock.now.advanced(by: duration)
            return Opened(
                isOpen: { clock.now < end },
                sleepUntilEnd: { try await clock.sleep(until: end, tolerance: nil) }
            )
        }
    }
}
